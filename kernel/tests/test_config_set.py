"""``hermes config set`` / ``unset``: dotted keys, values read as YAML, validated before the
file changes, comments and layout kept."""

from __future__ import annotations

import pytest

ORIGINAL = """\
# my settings: keep this comment
model:
    default: gpt-4o   # the usual one
agent:
    retries: 2        # two is plenty
"""


@pytest.fixture
def hermes(hermes_cli):
    (hermes_cli.home / "config.yaml").write_text(ORIGINAL)
    hermes_cli.config = hermes_cli.home / "config.yaml"
    return hermes_cli


def test_set_keeps_comments_and_layout_and_reads_values_as_yaml(hermes):
    assert hermes("config", "set", "agent.retries", "5")[1] == "agent.retries = 5\n"
    assert hermes("config", "set", "agent.toolsets", "[files, terminal]")[0] == 0
    assert hermes("config", "set", "approvals.mode", "smart")[0] == 0
    text = hermes.config.read_text()
    assert text.startswith(
        "# my settings: keep this comment\nmodel:\n    default: gpt-4o   # the usual one\n"
    )
    assert "    retries: 5        # two is plenty\n" in text
    assert "approvals:\n    mode: smart\n" in text
    assert "toolsets:\n    -   files\n    -   terminal\n" in text  # the file's own indent
    code, out, _ = hermes("config", "validate")
    assert code == 0 and out.endswith(": valid\n")


def test_a_value_that_does_not_validate_changes_nothing(hermes):
    code, _, err = hermes("config", "set", "agent.retries", "many")
    assert code == 1
    assert "agent.retries" in err and "(nothing was changed)" in err
    assert err.count("\n") == 1
    assert hermes.config.read_text() == ORIGINAL


def test_secrets_and_bad_keys_are_refused(hermes):
    code, _, err = hermes("config", "set", "model.api_key", "sk-123")
    assert code == 1 and "secrets live in HERMES_HOME/.env" in err
    code, _, err = hermes("config", "set", "model..default", "x")
    assert code == 2 and "not a dotted key" in err
    code, _, err = hermes("config", "set", "model.default.deeper", "x")
    assert code == 1 and "model.default is a value, not a section" in err
    assert hermes.config.read_text() == ORIGINAL


def test_an_unknown_key_typed_is_refused_with_the_key_it_likely_meant(hermes):
    code, _, err = hermes("config", "set", "agent.retires", "5")
    assert code == 1
    assert "unknown key 'agent.retires' is ignored" in err
    assert "rename it to 'retries'" in err and "(nothing was changed)" in err
    code, _, err = hermes("config", "set", "agnet.retries.deeper", "5")
    assert code == 1 and "unknown key 'agnet'" in err
    assert hermes.config.read_text() == ORIGINAL


def test_unset_removes_a_key_and_the_sections_it_empties(hermes):
    assert hermes("config", "unset", "model.default") == (
        0,
        "model.default unset (its default applies)\n",
        "",
    )
    text = hermes.config.read_text()
    assert "model" not in text and "# my settings: keep this comment" in text
    assert "retries: 2" in text
    code, _, err = hermes("config", "unset", "model.default")
    assert code == 1 and "model.default is not set" in err


def test_set_creates_the_file_when_there_is_none(hermes):
    hermes.config.unlink()
    assert hermes("config", "set", "model.default", "llama3")[0] == 0
    assert hermes.config.read_text() == "model:\n  default: llama3\n"


def test_approvals_mode_off_is_accepted_as_yaml_reads_it(hermes):
    """YAML 1.1 reads a bare ``off`` as false: ``config set approvals.mode off`` and a
    hand-written ``mode: off`` both mean the mode off (issue 62)."""
    code, out, err = hermes("config", "set", "approvals.mode", "off")
    assert code == 0, err
    assert "approvals:\n    mode: " in hermes.config.read_text()
    hermes.config.write_text("approvals:\n    mode: off\n")
    code, out, err = hermes("config", "validate")
    assert code == 0 and out.endswith(": valid\n"), err
    code, out, _ = hermes("config", "get", "approvals.mode")
    assert code == 0 and "off" in out
