"""``hermes profile``: separate homes in HERMES_HOME/profiles/, a sticky default, and the
errors that keep a typo from opening an empty home."""

from __future__ import annotations

import stat

import pytest


@pytest.fixture
def hermes(hermes_cli):
    (hermes_cli.home / "config.yaml").write_text("agent:\n  retries: 2\n")
    (hermes_cli.home / ".env").write_text("OPENAI_API_KEY=sk-test\n")
    (hermes_cli.home / ".env").chmod(0o600)
    return hermes_cli


def test_create_use_and_show_keep_each_profiles_state_apart(hermes):
    code, out, _ = hermes("profile", "create", "work")
    assert code == 0 and "created profile work" in out
    work = hermes.home / "profiles" / "work"
    assert work.is_dir()
    assert hermes("profile", "use", "work")[1] == f"using profile work: {work}\n"
    code, out, _ = hermes("profile", "list")
    assert out.splitlines() == [
        f"  default              {hermes.home}",
        f"* work                 {work}",
    ]
    assert hermes("config", "set", "agent.retries", "7")[0] == 0
    assert "retries: 7" in (work / "config.yaml").read_text()
    assert "retries: 2" in (hermes.home / "config.yaml").read_text()  # the default is untouched
    (work / "notes").mkdir()  # what a plugin keeps in the home is listed too
    (work / "notes" / "a.md").write_text("12345")
    code, out, _ = hermes("profile", "show")
    assert out.startswith("profile:  work  (hermes profile use")
    assert f"home:     {work}" in out
    assert "  notes        5 bytes" in out.splitlines()
    assert "  state.db     -" in out.splitlines()
    assert hermes("--profile", "default", "config", "path")[1].strip() == str(
        hermes.home / "config.yaml"
    )
    assert hermes("profile", "use", "default")[0] == 0
    assert hermes("config", "path")[1].strip() == str(hermes.home / "config.yaml")


def test_clone_copies_config_and_secrets_privately(hermes):
    assert hermes("profile", "create", "copy", "--clone")[0] == 0
    copied = hermes.home / "profiles" / "copy"
    assert (copied / "config.yaml").read_text() == "agent:\n  retries: 2\n"
    assert stat.S_IMODE((copied / ".env").stat().st_mode) == 0o600


def test_the_environment_wins_over_the_sticky_choice(hermes, monkeypatch):
    hermes("profile", "create", "a")
    hermes("profile", "create", "b")
    hermes("profile", "use", "a")
    monkeypatch.setenv("HERMES_PROFILE", "b")
    assert hermes("config", "path")[1].strip().endswith("profiles/b/config.yaml")
    assert "(HERMES_PROFILE)" in hermes("profile", "show")[1]


def test_a_missing_profile_is_one_line_with_the_fix(hermes):
    code, _, err = hermes("profile", "use", "nope")
    assert code == 1 and "create it with: hermes profile create nope" in err
    (hermes.home / "active_profile").write_text("gone\n")  # its folder was removed by hand
    code, _, err = hermes("config", "path")
    assert code == 1 and err.count("\n") == 1
    assert "go back to the default with: hermes profile use default" in err
    assert hermes("profile", "use", "default")[0] == 0  # the fix works from the broken state
    assert hermes("config", "path")[0] == 0


def test_delete_refuses_the_profile_in_use_and_the_default(hermes):
    hermes("profile", "create", "old")
    hermes("profile", "use", "old")
    code, _, err = hermes("profile", "delete", "old", "--yes")
    assert code == 1 and "the profile in use" in err
    hermes("profile", "use", "default")
    assert hermes("profile", "delete", "old", "--yes")[0] == 0
    assert not (hermes.home / "profiles" / "old").exists()
    assert hermes("profile", "delete", "default", "--yes")[0] == 1
    code, _, err = hermes("profile", "create", "bad/name")
    assert code == 2 and "use letters, digits" in err
