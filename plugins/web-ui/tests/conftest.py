"""A web UI on loopback, on the runtime of a Hermes home whose model is scripted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hermes_plugin_web_ui.server import WebUi
from hermes_plugin_web_ui.settings import WebSettings

from hermes_testkit import ScriptedOpenAIServer, service_in_thread

KEY = "web-ui-test-key-0123456789"


@dataclass
class Running:
    server: WebUi
    home: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.bound_port}"

    @property
    def login_path(self) -> str:
        """The path that logs a browser in: this run's token (or just /login with a key)."""
        return "/" + self.server.login_url.split("/", 3)[3]


@contextlib.contextmanager
def serving(home: Path, key: str | None = None, **options: object) -> Iterator[Running]:
    """The UI in a thread of its own (its own event loop), as the gateway or ``hermes web``
    runs it; stopped and its runtime closed on exit."""
    settings = WebSettings(host="127.0.0.1", port=0, key=key, home=str(home), **options)  # type: ignore[arg-type]  # the test passes WebSettings' own fields
    with service_in_thread(home, WebUi(settings)) as server:
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
        "agent:\n  retries: 1\nlearning:\n  review: false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.chdir(work)
    return home


@pytest.fixture
def ui(home: Path) -> Iterator[Running]:
    with serving(home) as running:
        yield running


@pytest.fixture
def ui_with_key(home: Path) -> Iterator[Running]:
    with serving(home, key=KEY) as running:
        yield running


@pytest.fixture
def web_ui_key() -> str:
    return KEY


@pytest.fixture
def serve_web_ui() -> object:
    """``serving(home, key=None, **settings)``: another UI on the same home, for a test."""
    return serving
