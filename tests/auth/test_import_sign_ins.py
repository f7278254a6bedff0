"""``hermes import hermes-agent --include-sign-ins`` on a hermes-agent 0.19 home whose
auth.json the real wheel's code wrote (tests/fixtures/hermes_agent/auth, made by
scripts/gen_hermes_agent_auth.py): its Nous Portal, Codex, xAI and MiniMax (China) sign-ins
become Hermes's,
and a chat then reaches the model with the imported token. Without the flag, nothing
secret comes over and the report says how to sign in again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hermes_testkit import Reply, ScriptedOpenAIServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes_agent"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    copy = tmp_path / "hermes-agent-home"
    shutil.copytree(FIXTURES / "home", copy, symlinks=True)
    shutil.copyfile(FIXTURES / "auth" / "auth.json", copy / "auth.json")
    return copy


def test_sign_ins_come_over_when_asked_and_a_chat_uses_them(hermes, source) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer() as model:
        theirs = json.loads((source / "auth.json").read_text())
        theirs["providers"]["nous"]["inference_base_url"] = model.base_url  # reach the fake
        (source / "auth.json").write_text(json.dumps(theirs))
        result = hermes("import", "hermes-agent", str(source), "--yes", "--include-sign-ins")
        assert result.code == 0, result.err
        assert "sign-ins: 4 came over" in result.out, result.out
        status = hermes("auth", "status")
        assert [line.split()[0] for line in status.out.splitlines()] == [
            "codex",
            "minimax-oauth",
            "nous",
            "xai-oauth",
        ]
        minimax = json.loads((hermes.home / "auth.json").read_text())["sign_ins"]["minimax-oauth"]
        assert minimax["issuer"] == "https://api.minimaxi.com"  # its region comes with it
        assert minimax["base_url"] == "https://api.minimaxi.com/anthropic"
        hermes.config("model:\n  provider: nous\n  default: Hermes-4-70B\n")
        model.queue(Reply.say("Hello from the imported sign-in."))
        chat = hermes("chat", "-q", "hi")
        assert chat.code == 0, chat.err
        assert chat.out == "Hello from the imported sign-in.\n"
        (asked,) = model.requests
    assert asked.headers["authorization"] == "Bearer at-nous-fixture"
    assert "at-nous-fixture" not in result.out + result.err + status.out
    assert (hermes.home / "auth.json").stat().st_mode & 0o777 == 0o600


def test_without_the_flag_no_token_comes_over_and_the_report_says_why(hermes, source) -> None:  # type: ignore[no-untyped-def]
    result = hermes("import", "hermes-agent", str(source), "--yes", "--details")
    assert result.code == 0, result.err
    assert not (hermes.home / "auth.json").exists()
    assert "sign in again: hermes login nous (or import with --include-sign-ins)" in result.out
    assert "rt-nous-fixture" not in result.out
