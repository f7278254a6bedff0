"""``hermes setup`` from flags alone (the interactive wizard runs in tests/integration)."""

from __future__ import annotations

import io
import stat


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
    assert result.code == 2 and "--provider is needed" in result.err
