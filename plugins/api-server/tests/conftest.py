"""An API server on loopback, on the runtime of a Hermes home whose model is scripted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hermes_plugin_api_server.server import ApiServer
from hermes_plugin_api_server.settings import ServerSettings

from hermes_testkit import ScriptedOpenAIServer, service_in_thread

KEY = "sk-test-0123456789abcdef"


@dataclass
class Running:
    server: ApiServer
    home: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.bound_port}/v1"


@contextlib.contextmanager
def serving(home: Path, settings: ServerSettings) -> Iterator[Running]:
    """The server in a thread of its own (its own event loop), as the gateway or
    ``hermes serve`` would run it; stopped and its runtime closed on exit."""
    with service_in_thread(home, ApiServer(settings)) as server:
        yield Running(server, home)


@pytest.fixture
def home(
    tmp_path: Path, openai_server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.chdir(work)
    return home


@pytest.fixture
def api(home: Path) -> Iterator[Running]:
    with serving(home, ServerSettings(host="127.0.0.1", port=0, keys=(KEY,))) as running:
        yield running


@pytest.fixture
def api_with_cors(home: Path) -> Iterator[Running]:
    settings = ServerSettings(
        host="127.0.0.1", port=0, keys=(KEY,), cors_origins=("https://ui.example",)
    )
    with serving(home, settings) as running:
        yield running
