"""A home whose model is the scripted one, with no background review, for the skills tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def chat(hermes, openai_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.agents/skills of the machine
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "learning:\n  review: false\n  nudge_every_turns: 0\napprovals:\n  mode: off\n"
    )
    return hermes
