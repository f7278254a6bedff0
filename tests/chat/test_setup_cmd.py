"""``hermes setup`` from flags alone (the interactive wizard runs in tests/integration)."""

from __future__ import annotations

import io
import stat

from hermes_testkit import Reply


def test_unattended_setup_writes_config_and_key(hermes, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-ant-secret-1\n"))
    result = hermes(
        "setup", "--yes", "--provider", "anthropic", "--model", "claude-x", "--api-key-stdin"
    )
    assert result.code == 0, result.err
    assert "sk-ant-secret-1" not in result.out + result.err
    dotenv = hermes.home / ".env"
    assert 'ANTHROPIC_API_KEY="sk-ant-secret-1"' in dotenv.read_text()
    assert stat.S_IMODE(dotenv.stat().st_mode) == 0o600
    config = (hermes.home / "config.yaml").read_text()
    assert "provider: anthropic" in config and "default: claude-x" in config
    shown = hermes("model")
    assert "In use: anthropic / claude-x" in shown.out


def test_setup_keeps_other_keys_and_replaces_its_own(hermes, monkeypatch):
    hermes.dotenv('# mine\nOTHER="keep me"\nANTHROPIC_API_KEY=old\n')
    monkeypatch.setattr("sys.stdin", io.StringIO("new-key\n"))
    assert hermes("setup", "-y", "--provider", "anthropic", "--api-key-stdin").code == 0
    text = (hermes.home / ".env").read_text()
    assert text == '# mine\nOTHER="keep me"\nANTHROPIC_API_KEY="new-key"\n'


def test_setup_refuses_a_malformed_env_rather_than_overwrite_it(hermes, monkeypatch):
    hermes.dotenv("this is not a dotenv line\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("k\n"))
    result = hermes("setup", "-y", "--provider", "anthropic", "--api-key-stdin")
    assert result.code == 1 and "KEY=VALUE" in result.err
    assert (hermes.home / ".env").read_text() == "this is not a dotenv line\n"


def test_unattended_setup_needs_a_provider(hermes):
    result = hermes("setup", "--yes")
    assert result.code == 2 and "--provider or --base-url is needed" in result.err


def test_rotating_a_key_keeps_the_model_and_a_duplicate_line_cannot_win(hermes, monkeypatch):
    hermes.config("model:\n  provider: anthropic\n  default: claude-keep\n")
    hermes.dotenv("ANTHROPIC_API_KEY=one\nANTHROPIC_API_KEY=two\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("three\r\n"))
    assert hermes("setup", "-y", "--provider", "anthropic", "--api-key-stdin").code == 0
    assert (hermes.home / ".env").read_text() == 'ANTHROPIC_API_KEY="three"\n'
    assert "default: claude-keep" in (hermes.home / "config.yaml").read_text()


def test_a_key_with_control_characters_round_trips(hermes, monkeypatch):
    from hermes_commons.dotenv import read_dotenv, set_dotenv_value

    path = hermes.home / ".env"
    set_dotenv_value(path, "ODD", 'a"b\\c\rd\te\nf')
    assert read_dotenv(path) == {"ODD": 'a"b\\c\rd\te\nf'}


def test_an_unknown_backend_is_refused_before_anything_is_written(hermes):
    result = hermes("setup", "-y", "--provider", "local", "--backend", "Docker")
    assert result.code == 2 and "unknown backend 'Docker'" in result.err
    assert not (hermes.home / "config.yaml").exists()
    assert hermes("model").code == 0  # the config still loads


def test_a_server_of_your_own_is_set_up_from_its_url_and_tested(hermes, openai_server):
    openai_server.queue(Reply.say("Hello there, five words now"))
    result = hermes("setup", "-y", "--base-url", openai_server.base_url, "--test")
    assert result.code == 0, result.err
    assert "The server offers: test-model" in result.out
    assert "It works" in result.out
    config = (hermes.home / "config.yaml").read_text()
    assert f"base_url: {openai_server.base_url}" in config and "default: test-model" in config
    assert "api_key_env" not in config and "provider:" not in config
    assert len(openai_server.requests) == 1  # the test request, to the server just chosen


def test_a_test_that_fails_says_what_to_change_and_where(hermes, openai_server):
    openai_server.queue(Reply.error(401, "Incorrect API key provided"))
    result = hermes("setup", "-y", "--base-url", openai_server.base_url, "--test")
    assert result.code == 1
    assert "The test failed" in result.err and "HTTP 401" in result.err
    assert f"put it in {hermes.home / '.env'}" in result.err
    assert "model.api_key_env" in result.err and "check the API key" not in result.err


def test_enter_chooses_the_local_backend_even_with_others_installed(hermes):
    assert hermes("setup", "-y", "--provider", "local").code == 0
    assert "backend: local" in (hermes.home / "config.yaml").read_text()


def test_a_provider_without_a_stored_key_is_saved_with_a_warning(hermes):
    result = hermes("setup", "-y", "--provider", "anthropic")
    assert result.code == 0
    assert "no key is stored in ANTHROPIC_API_KEY, so anthropic cannot answer yet" in result.err
    assert "--api-key-stdin" in result.err


def test_a_url_that_is_not_http_is_refused(hermes):
    result = hermes("setup", "-y", "--base-url", "localhost:8000")
    assert result.code == 2 and "not an http:// or https:// URL" in result.err
    assert not (hermes.home / "config.yaml").exists()
