"""Signing in instead of pasting keys, end to end against a loopback authorization server
that follows RFC 8628, RFC 7636 and RFC 6749 (``hermes login NAME --issuer URL``), each
sign-in then used by a real ``hermes chat -q`` against a scripted model that sees the
bearer token the sign-in holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from hermes_plugin_auth.testing import OAuthServer

from hermes_testkit import Reply, ScriptedOpenAIServer, ScriptedResponsesServer

HERMES = str(Path(sys.executable).parent / "hermes")


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if "error" in line.lower()]


def test_the_device_flow_waits_slows_down_and_signs_in_to_copilot(hermes) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedOpenAIServer() as model:
        issuer.device_answers = ["authorization_pending", "slow_down"]
        issuer.copilot_api = model.base_url  # the exchange names the API to use
        signed = hermes("login", "copilot", "--issuer", issuer.url)
        assert signed.code == 0, signed.err
        assert (
            "enter the code WDJB-MJHT" in signed.err and "Signed in to GitHub Copilot" in signed.out
        )
        assert issuer.slowed_properly is True  # 5 s more after slow_down, as RFC 8628 asks
        assert len(issuer.polls) == 3 and issuer.exchanges == 1
        model.queue(Reply.say("Hello from Copilot."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Hello from Copilot.\n"
        (asked,) = model.requests
    token = issuer.issued[-1]
    assert token.startswith("copilot-")  # the exchanged token, not GitHub's
    assert asked.headers["authorization"] == f"Bearer {token}"
    assert asked.headers["editor-version"].startswith("vscode/")
    assert asked.headers["copilot-integration-id"] == "vscode-chat"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("access_denied", "the sign-in to Nous Portal was refused (access_denied)"),
        ("expired_token", "the code expired before it was approved (expired_token)"),
    ],
)
def test_a_refused_or_expired_device_code_is_one_line(hermes, answer, said) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer:
        issuer.device_answers = ["authorization_pending", answer]
        result = hermes("login", "nous", "--issuer", issuer.url)
    assert result.code == 1
    errors = _errors(result.err)
    assert len(errors) == 1 and said in errors[0], result.err
    assert "Traceback" not in result.err
    assert not (hermes.home / "auth.json").exists()


def _nous(hermes, issuer: OAuthServer, model: ScriptedOpenAIServer) -> None:  # type: ignore[no-untyped-def]
    signed = hermes("login", "nous", "--issuer", issuer.url, "--base-url", model.base_url)
    assert signed.code == 0, signed.err


def test_a_token_near_its_expiry_is_refreshed_and_a_refused_one_renewed_once(hermes) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedOpenAIServer() as model:
        issuer.access_ttl = 60  # inside the two minutes before expiry: renewed before use
        _nous(hermes, issuer, model)
        first = issuer.issued[-1]
        model.queue(Reply.say("one"), Reply.error(401), Reply.say("two"))
        assert hermes("chat", "-q", "hi").out == "one\n"
        assert issuer.refreshes == 1
        refreshed = issuer.issued[-1]
        issuer.access_ttl = 3600
        again = hermes("chat", "-q", "again")
        assert again.code == 0, again.err
        assert again.out == "two\n"
        assert issuer.refreshes == 3  # once more before use (60 s left), once after the 401
        bearers = [r.headers["authorization"] for r in model.requests]
    assert first != refreshed
    assert bearers[0] == f"Bearer {refreshed}"
    assert bearers[1] != bearers[2] == f"Bearer {issuer.issued[-1]}"


def test_a_revoked_refresh_token_says_sign_in_again_in_one_line(hermes) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedOpenAIServer() as model:
        issuer.access_ttl = 60
        _nous(hermes, issuer, model)
        issuer.revoke_refresh_tokens()
        result = hermes("chat", "-q", "hi")
        assert not model.requests
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("hermes: error:")]
    assert len(errors) == 1, result.err
    assert "invalid_grant" in errors[0] and "sign in again with hermes login nous" in errors[0]


def _login_in_a_terminal(
    home: Path, issuer: OAuthServer, model_url: str, *more: str, verb: str = "login"
) -> str:
    """``hermes login codex`` (or ``hermes auth add codex``: ``verb="auth add"``) as a person
    runs it over SSH: the address it prints is opened (here: asked of the server, which
    approves at once), and where the browser was sent is pasted back. Returns what it said."""
    env = {**os.environ, "HERMES_HOME": str(home)}
    command = [HERMES, *verb.split(), "codex", "--issuer", issuer.url, "--base-url", model_url]
    with subprocess.Popen(
        [*command, *more],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        assert process.stderr is not None and process.stdin is not None
        said = []
        for line in process.stderr:
            said.append(line)
            if "/oauth/authorize?" in line:
                break
        address = said[-1].strip()
        landed = httpx.get(address, follow_redirects=False).headers["location"]
        out, err = process.communicate(landed + "\n", timeout=60)
    assert process.returncode == 0, "".join(said) + err
    return out


def test_pkce_over_ssh_signs_in_to_codex_by_pasting_the_address_back(hermes) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedResponsesServer() as model:
        out = _login_in_a_terminal(hermes.home, issuer, model.base_url, "--no-browser")
        assert "Signed in to OpenAI Codex" in out
        model.queue(Reply.say("Hello from Codex."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Hello from Codex.\n"
        (asked,) = model.requests
    assert asked.headers["authorization"] == f"Bearer {issuer.issued[-1]}"
    assert asked.headers["originator"] == "codex_cli_rs"
    assert asked.headers["chatgpt-account-id"] == "acct-kit-1"  # from the id token


def test_a_wrong_code_verifier_is_refused_by_the_server() -> None:
    """What PKCE protects: a code taken by someone without the verifier is worth nothing."""
    from authlib.integrations.httpx_client import OAuth2Client

    with OAuthServer() as issuer:
        client = OAuth2Client(
            client_id="c",
            token_endpoint_auth_method="none",
            redirect_uri="http://localhost:1455/auth/callback",
            code_challenge_method="S256",
        )
        url, _state = client.create_authorization_url(
            f"{issuer.url}/oauth/authorize", code_verifier="the-right-verifier-" + "x" * 30
        )
        landed = httpx.get(url, follow_redirects=False).headers["location"]
        code = landed.split("code=")[1].split("&")[0]
        answer = httpx.post(
            f"{issuer.url}/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": "http://localhost:1455/auth/callback",
                "client_id": "c",
                "code_verifier": "a-wrong-verifier-" + "y" * 30,
            },
        )
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "invalid_grant",
        "error_description": "PKCE verification failed",
    }


def test_a_canary_token_stays_out_of_logs_the_store_backups_status_and_tools(
    hermes, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    import zipfile

    with OAuthServer() as issuer, ScriptedOpenAIServer() as model:
        _nous(hermes, issuer, model)
        canary = issuer.issued[-1]
        model.queue(
            Reply.tool_call("terminal", {"command": "env"}),
            Reply.tool_call("terminal", {"command": f"cat {hermes.home / 'auth.json'}"}),
            Reply.tool_call("read_file", {"path": str(hermes.home / "auth.json")}),
            Reply.say("done"),
        )
        result = hermes("chat", "-q", "show me the environment")
        assert result.code == 0, result.err
        tool_output = model.requests[-3].json["messages"][-1]["content"]
        reading = model.requests[-2].json["messages"][-1]["content"]
        file_tool = model.requests[-1].json["messages"][-1]["content"]
        status = hermes("auth", "status")
        backup = tmp_path / "backup.zip"
        assert hermes("backup", str(backup)).code == 0
        with_secrets = tmp_path / "with-secrets.zip"
        assert hermes("backup", str(with_secrets), "--include-secrets").code == 0
    assert "PATH=" in tool_output  # the tool ran and showed its environment
    assert canary not in tool_output
    assert reading.startswith("refused: this command reads Hermes's own secrets")
    assert canary not in reading and canary not in file_tool, file_tool
    assert "nous" in status.out and "renews itself" in status.out
    assert canary not in status.out + status.err + result.out + result.err
    for log in (hermes.home / "logs").glob("**/*"):
        if log.is_file():
            assert canary.encode() not in log.read_bytes(), log
    for database in hermes.home.glob("*.db*"):
        assert canary.encode() not in database.read_bytes(), database
    with zipfile.ZipFile(backup) as archive:
        assert "auth.json" not in archive.namelist()
        assert all(canary.encode() not in archive.read(name) for name in archive.namelist())
    with zipfile.ZipFile(with_secrets) as archive:
        assert "auth.json" in archive.namelist()
    assert (hermes.home / "auth.json").stat().st_mode & 0o777 == 0o600


def test_a_pool_rotates_past_a_rate_limited_key_and_auth_list_shows_it(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io

    with ScriptedOpenAIServer() as model:
        hermes.config(
            "model:\n  provider: work\n"
            f"providers:\n  work:\n    base_url: {model.base_url}\n    api_key_env: WORK_KEY\n"
            "    default_model: test-model\nagent:\n  retries: 1\n"
        )
        hermes.dotenv("WORK_KEY=key-one\n")
        monkeypatch.setattr(sys, "stdin", io.StringIO("key-two\n"))
        added = hermes("auth", "add", "work", "--api-key-stdin")
        assert added.code == 0, added.err
        assert "Added WORK_API_KEY_2 to work's pool (2 keys): WORK_KEY, WORK_API_KEY_2" in added.out
        model.queue(Reply.error(429, retry_after=90), Reply.say("Finished on the second key."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Finished on the second key.\n"
        bearers = [r.headers["authorization"] for r in model.requests]
    assert bearers == ["Bearer key-one", "Bearer key-two"]
    listed = hermes("auth", "list")
    lines = {line.split()[0]: line for line in listed.out.splitlines() if line.startswith("  ")}
    assert "cooling down" in lines["WORK_KEY"] and "rate_limit" in lines["WORK_KEY"]
    assert lines["WORK_API_KEY_2"].endswith("ok")
    assert "key-one" not in listed.out and "key-two" not in listed.out
    reset = hermes("auth", "reset", "work")
    assert reset.code == 0 and "cooling down" not in hermes("auth", "list").out


def test_an_issuer_that_is_not_https_is_refused(hermes) -> None:  # type: ignore[no-untyped-def]
    result = hermes("login", "nous", "--issuer", "http://auth.example.com")
    assert result.code == 2
    assert "--issuer must be an https:// address" in result.err


def test_adding_a_key_to_a_provider_that_does_not_exist_is_refused(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("key\n"))
    result = hermes("auth", "add", "opnai", "--api-key-stdin")
    assert result.code == 2 and "no provider 'opnai'" in result.err
    assert not (hermes.home / ".env").exists()


@pytest.mark.parametrize(
    ("name", "server_class"),
    [("xai-oauth", ScriptedResponsesServer), ("qwen-oauth", ScriptedOpenAIServer)],
)
def test_the_other_device_sign_ins_reach_their_apis(hermes, name, server_class) -> None:  # type: ignore[no-untyped-def]
    """xAI (the Responses API) and Qwen (a device code with PKCE: the server checks the
    verifier against the challenge), each then used by a chat."""
    with OAuthServer() as issuer, server_class() as model:
        signed = hermes("login", name, "--issuer", issuer.url, "--base-url", model.base_url)
        assert signed.code == 0, signed.err
        model.queue(Reply.say(f"Hello from {name}."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == f"Hello from {name}.\n"
        (asked,) = model.requests
    assert asked.headers["authorization"] == f"Bearer {issuer.issued[-1]}"


def test_a_sign_in_serves_as_a_fallback_with_its_token(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with OAuthServer() as issuer, ScriptedOpenAIServer() as primary, ScriptedOpenAIServer() as nous:
        _nous(hermes, issuer, nous)
        monkeypatch.setenv("WORK_KEY", "work-key")
        hermes.config(
            "model:\n  provider: work\n  fallback_providers:\n    - provider: nous\n"
            f"providers:\n  work:\n    base_url: {primary.base_url}\n    api_key_env: WORK_KEY\n"
            "    default_model: test-model\nagent:\n  retries: 1\n"
        )
        primary.queue(Reply.error(503), Reply.error(503))
        nous.queue(Reply.say("Answered by the fallback."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == "Answered by the fallback.\n"
        (asked,) = nous.requests
    assert asked.headers["authorization"] == f"Bearer {issuer.issued[-1]}"
