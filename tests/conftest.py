"""In-process ``hermes`` runs with the real plugins of this workspace installed (providers
openai, anthropic, local), a fresh HERMES_HOME, and no API keys unless a test sets them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import hermes_plugin_provider_openai
import pytest
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.cli.main import main
from hermes_kernel.engine.models import ModelRoute, RetryPolicy
from hermes_kernel.engine.turn import EngineSettings, TurnEngine
from hermes_kernel.store.state import StateStore
from hermes_sdk import Kind
from hermes_sdk.models import ProviderSettings

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY")


@dataclass
class Result:
    code: int
    out: str
    err: str


class Hermes:
    def __init__(
        self, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ):
        self.home = home
        self._monkeypatch = monkeypatch
        self._capsys = capsys

    def __call__(self, *args: str) -> Result:
        self._monkeypatch.setattr("sys.argv", ["hermes", *args])
        with pytest.raises(SystemExit) as exited:
            main()
        captured = self._capsys.readouterr()
        return Result(int(exited.value.code or 0), captured.out, captured.err)

    def config(self, text: str) -> None:
        (self.home / "config.yaml").write_text(text)

    def dotenv(self, text: str) -> None:
        path = self.home / ".env"
        path.write_text(text)
        path.chmod(0o600)

    def app(self):  # an App for calling the kernel's model setup directly
        from hermes_kernel.app import App
        from hermes_kernel.config.settings import Flags

        return App(Flags(home=self.home))


@pytest.fixture
def hermes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Hermes:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in (
        *KEY_VARIABLES,
        "HERMES_LOAD_PLUGINS",
        "HERMES_DISABLE_PLUGINS",
        "HERMES_TRACE_PLUGINS",
    ):
        monkeypatch.delenv(name, raising=False)
    return Hermes(home, monkeypatch, capsys)


FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def provider_spec(register_plugin):
    return register_plugin(hermes_plugin_provider_openai).provided(Kind.PROVIDER)["openai"]


@pytest.fixture
def make_engine(tmp_path, openai_server, provider_spec):
    made = []

    def make(
        tools=(),
        *,
        servers=None,
        observer=None,
        settings=None,
        store=None,
        engine_options=None,
        **route_options,
    ):
        routes = [
            ModelRoute(
                f"route{i}",
                provider_spec.factory(
                    ProviderSettings(
                        base_url=server.base_url,
                        api_key="sk-test-secret-key",
                        timeout_seconds=5,
                        **route_options,
                    )
                ),
                "test-model",
            )
            for i, server in enumerate(servers or [openai_server])
        ]
        engine = TurnEngine(
            store or StateStore(Database(tmp_path / "state.db")),
            routes,
            {spec.name: spec for spec in tools},
            tmp_path / "home",
            observer=observer,
            settings=settings or EngineSettings(retry=FAST_RETRY),
            secret_values=["hunter2-secret"],
            **(engine_options or {}),
        )
        made.append(engine)
        return engine

    return make
