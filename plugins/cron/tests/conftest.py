"""A Hermes home whose model is the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cron_home(tmp_path: Path, openai_server, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n"
    )
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home
