"""MiniMax's user-code sign-in (not RFC 8628: its own grant, ``status`` answers, expiries
in epoch milliseconds), and several accounts of one service used as a pool, each end to end
through ``hermes login`` / ``hermes auth add`` and a real ``hermes chat -q``."""

from __future__ import annotations

import json
import time

import pytest
from hermes_plugin_auth.testing import OAuthServer

from hermes_testkit import (
    Reply,
    ScriptedAnthropicServer,
    ScriptedOpenAIServer,
    ScriptedResponsesServer,
)

from .test_sign_in import _login_in_a_terminal  # the browser sign-in over SSH


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("Error", "hermes: error"))]


@pytest.mark.parametrize("expiry_in_ms", [True, False], ids=["epoch-ms", "seconds"])
def test_minimax_signs_in_with_a_user_code_and_its_token_is_a_bearer(hermes, expiry_in_ms) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedAnthropicServer() as model:
        issuer.device_answers = ["authorization_pending"]  # one "pending", then approved
        issuer.minimax_expiry_in_ms = expiry_in_ms
        issuer.access_ttl = 60  # inside the two minutes: renewed before the first request
        signed = hermes("login", "minimax", "--issuer", issuer.url, "--base-url", model.base_url)
        assert signed.code == 0, signed.err
        assert "/oauth/verify?user_code=MM-" in signed.err and "enter the code MM-" in signed.err
        assert "Signed in to MiniMax" in signed.out and len(issuer.polls) == 2
        stored = json.loads((hermes.home / "auth.json").read_text())["sign_ins"]
        expires_at = stored["minimax-oauth"]["expires_at"]
        assert time.time() < expires_at < time.time() + 61  # epoch ms and seconds both read
        model.queue(Reply.say("Hello from MiniMax."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Hello from MiniMax.\n"
        assert issuer.refreshes == 1  # its refresh answers in MiniMax's form, read as such
        (asked,) = model.requests
    assert asked.headers["authorization"] == f"Bearer {issuer.issued[-1]}"
    assert "x-api-key" not in asked.headers  # MiniMax's Messages API takes bearers only
    status = hermes("auth", "status")
    assert "minimax-oauth" in status.out and issuer.issued[-1] not in status.out


def test_a_minimax_sign_in_refused_or_answered_for_another_request_is_one_line(hermes) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer:
        issuer.device_answers = ["authorization_pending", "access_denied"]
        refused = hermes("login", "minimax-oauth", "--issuer", issuer.url)
        issuer.device_answers = []
        issuer.minimax_other_state = True
        crossed = hermes("login", "minimax-oauth", "--issuer", issuer.url)
    assert refused.code == 1 and crossed.code == 1
    (said,) = _errors(refused.err)
    assert "the sign-in to MiniMax (Coding Plan sign-in) was refused" in said
    (said,) = _errors(crossed.err)
    assert "answered with another sign-in's state" in said
    assert "Traceback" not in refused.err + crossed.err
    assert not (hermes.home / "auth.json").exists()


def test_an_unknown_region_is_refused_before_anything_is_asked(hermes) -> None:  # type: ignore[no-untyped-def]
    result = hermes("login", "minimax", "--region", "eu")
    assert result.code == 2
    assert "minimax-oauth has no region 'eu' (regions: global, cn)" in result.err


def test_a_second_account_is_a_pool_the_turn_finishes_on_and_auth_list_shows(hermes) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedOpenAIServer() as model:
        where = ("--issuer", issuer.url, "--base-url", model.base_url)
        assert hermes("login", "nous", *where).code == 0
        first = issuer.issued[-1]
        added = hermes("auth", "add", "nous", *where)
        assert added.code == 0, added.err
        assert "2 account(s), tried in order: nous, nous#2" in added.out
        second = issuer.issued[-1]
        assert "nous, nous#2, nous#3" in hermes("auth", "add", "nous", *where).out
        model.queue(Reply.error(429, retry_after=90), Reply.say("Finished on the second account."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Finished on the second account.\n"
        bearers = [r.headers["authorization"] for r in model.requests]
        listed = hermes("auth", "list")
        again = hermes("login", "nous", "--base-url", model.base_url)  # same issuer as before
        assert again.code == 0, again.err
        relisted = hermes("auth", "list").out
    assert bearers == [f"Bearer {first}", f"Bearer {second}"]
    lines = {line.split()[0]: line for line in listed.out.splitlines() if line.startswith("  ")}
    assert "nous (3 sign-ins" in listed.out
    assert "cooling down" in lines["nous"] and "rate_limit" in lines["nous"]
    assert lines["nous#2"].endswith("ok")
    assert first not in listed.out and second not in listed.out
    assert "cooling down" not in relisted  # signed in afresh: not cooling down any more
    removed = hermes("auth", "remove", "nous", "nous#3")
    assert removed.code == 0 and "left: nous, nous#2" in removed.out
    out = hermes("logout", "nous")  # every account of it
    assert out.code == 0 and "Signed out of nous, nous#2" in out.out
    assert json.loads((hermes.home / "auth.json").read_text())["sign_ins"] == {}


def test_an_account_that_cannot_renew_for_now_hands_over_to_the_next(hermes) -> None:  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer() as model:
        with OAuthServer() as issuer:
            where = ("--issuer", issuer.url, "--base-url", model.base_url)
            issuer.access_ttl = 60  # the first account's token needs renewing before use
            assert hermes("login", "nous", *where).code == 0
            issuer.access_ttl = 3600
            assert hermes("auth", "add", "nous", *where).code == 0
            second = issuer.issued[-1]
        # The issuer is gone: the first account cannot renew; the second needs not.
        model.queue(Reply.say("Answered by the second account."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Answered by the second account.\n"
        (asked,) = model.requests
    assert asked.headers["authorization"] == f"Bearer {second}"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("codex#\u00b2", "an account is NAME or NAME#N with N from 2"),
        ("codex#1", "an account is NAME or NAME#N with N from 2"),
        ("codex#5", "no account codex#5: add one with hermes auth add codex"),
    ],
)
def test_an_account_name_that_is_not_one_is_a_usage_error(hermes, name, said) -> None:  # type: ignore[no-untyped-def]
    result = hermes("login", name)
    assert result.code == 2 and said in result.err and "Traceback" not in result.err


def test_each_codex_account_is_named_to_the_api_with_its_own_token(hermes) -> None:  # type: ignore[no-untyped-def]
    """Two ChatGPT plans: the second answers when the first's usage runs out, and each
    request names its own account (the header follows the token, not the endpoint)."""
    with ScriptedResponsesServer() as model:
        far = time.time() + 3600

        def account(token: str, account_id: str) -> dict[str, object]:
            return {
                "service": "codex",
                "issuer": "https://auth.openai.com",
                "access_token": token,
                "refresh_token": None,
                "expires_at": far,
                "account_id": account_id,
                "base_url": model.base_url,
            }

        sign_ins = {"codex": account("tok-a", "acct-a"), "codex#2": account("tok-b", "acct-b")}
        (hermes.home / "auth.json").write_text(json.dumps({"version": 1, "sign_ins": sign_ins}))
        model.queue(Reply.error(402), Reply.say("On the second plan."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "On the second plan.\n"
        asked = [
            (r.headers["authorization"], r.headers["chatgpt-account-id"]) for r in model.requests
        ]
    assert asked == [("Bearer tok-a", "acct-a"), ("Bearer tok-b", "acct-b")]
    listed = hermes("auth", "list").out
    assert "exhausted" in listed and "codex#2" in listed


def test_signing_in_the_same_chatgpt_account_twice_is_refused(hermes) -> None:  # type: ignore[no-untyped-def]
    sign_ins = {
        "codex": {
            "service": "codex",
            "issuer": "https://auth.openai.com",
            "access_token": "tok-a",
            "account_id": "acct-kit-1",  # the account the kit's sign-in names
        }
    }
    (hermes.home / "auth.json").write_text(json.dumps({"version": 1, "sign_ins": sign_ins}))
    with OAuthServer() as issuer:
        with pytest.raises(AssertionError, match="that is the account codex already holds"):
            _login_in_a_terminal(
                hermes.home, issuer, "http://127.0.0.1:9", "--no-browser", verb="auth add"
            )
        issuer.account_id = "acct-kit-2"
        out = _login_in_a_terminal(
            hermes.home, issuer, "http://127.0.0.1:9", "--no-browser", verb="auth add"
        )
    assert "tried in order: codex, codex#2" in out
    kept = json.loads((hermes.home / "auth.json").read_text())["sign_ins"]
    assert (
        kept["codex#2"]["account_id"] == "acct-kit-2" and kept["codex"]["access_token"] == "tok-a"
    )


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("google", "Google bans accounts that use them from other tools"),
        ("claude-code", "Anthropic accepts a subscription's token only from Claude Code"),
    ],
)
def test_a_declined_sign_in_says_why_and_what_to_use_instead(hermes, name, said) -> None:  # type: ignore[no-untyped-def]
    result = hermes("login", name)
    assert result.code == 1
    (line,) = _errors(result.err)
    assert said in line and ("API_KEY" in line)
