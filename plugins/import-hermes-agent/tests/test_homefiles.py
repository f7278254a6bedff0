"""The files that belong to no plugin and come over as files: .env merged at 0600, SOUL.md;
and what is left, saying so, when no installed plugin brings a part of the home over.
(Memory entries, skills and cron jobs: the tests of those plugins.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_import_hermes_agent.homefiles import import_env, import_soul, source_env
from hermes_plugin_import_hermes_agent.importer import _other_files

from hermes_commons.dotenv import DotenvError, read_dotenv


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_env_merges_secrets_keeps_this_homes_and_stays_private(tmp_path):
    target = tmp_path / "ours"
    write(target / ".env", "OPENAI_API_KEY=mine\n")
    source = tmp_path / "ha"
    write(
        source / ".env",
        "# keys\nexport OPENAI_API_KEY='theirs'\nBRAVE_SEARCH_API_KEY=b\nTERMINAL_ENV=docker\n"
        "EMPTY_API_KEY=\n",
    )
    theirs = source_env(source)
    assert "EMPTY_API_KEY" not in theirs, "a key set empty holds nothing to bring"
    section = import_env(
        target, theirs, {"CUSTOM_API_KEY": "c d"}, {"TERMINAL_ENV"},
        {"BRAVE_SEARCH_API_KEY": "BRAVE_API_KEY"}, dry_run=False,
    )  # fmt: skip
    assert read_dotenv(target / ".env") == {
        "OPENAI_API_KEY": "mine",
        "BRAVE_API_KEY": "b",
        "CUSTOM_API_KEY": "c d",
    }
    assert (target / ".env").stat().st_mode & 0o777 == 0o600
    assert ("TERMINAL_ENV", "a setting, not a secret: it is in config.yaml now") in section.left_out
    assert section.added == ["BRAVE_SEARCH_API_KEY as BRAVE_API_KEY", "CUSTOM_API_KEY"]


def test_a_line_of_their_env_that_is_not_key_value_is_one_line_naming_it(tmp_path):
    source = tmp_path / "ha"
    write(source / ".env", "OPENAI_API_KEY=sk-one\nthis is not a setting\n")
    with pytest.raises(DotenvError) as refused:
        source_env(source)
    assert str(refused.value) == (
        f"{source / '.env'}:2: expected KEY=VALUE with KEY made of letters, digits and _"
    )


def test_only_a_persona_the_user_wrote_comes_over(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "SOUL.md", "You are Hermes Agent, an intelligent AI assistant created by "
                              "Nous Research. You are helpful.")  # fmt: skip
    assert import_soul(source, target, dry_run=False).left_out
    write(source / "SOUL.md", "<!-- a template -->\n# Persona\n")
    assert import_soul(source, target, dry_run=False).left_out
    write(source / "SOUL.md", "You are terse and you love tea.\n")
    assert import_soul(source, target, dry_run=False).added == ["SOUL.md"]
    assert (target / "SOUL.md").read_text() == "You are terse and you love tea.\n"


def test_a_part_no_installed_plugin_brings_over_is_left_naming_the_plugin(tmp_path):
    source = tmp_path / "ha"
    write(source / "cron" / "jobs.json", "{}")
    write(source / "skills" / "tidy" / "SKILL.md", "---\nname: tidy\n---\n")
    write(source / "kanban.db", "")
    section = _other_files(source, brought={"skills"})
    assert section.left_out == [
        (
            "cron/",
            "its cron jobs: no installed plugin brings them over; install the one that keeps "
            "them (hermes plugins install cron), then import again",
        ),
        (
            "kanban.db",
            "its kanban tasks: no installed plugin brings them over; install the one that "
            "keeps them (hermes plugins install kanban), then import again",
        ),
    ]
