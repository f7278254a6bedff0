"""In-process ``hermes`` runs with the real plugins of this workspace installed (providers
openai, anthropic, local), a fresh HERMES_HOME, and no API keys unless a test sets them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_kernel.cli.main import main

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
        from hermes_kernel.cli.app import App
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
