"""The ``skills:`` section is this plugin's: its model (what ``hermes config validate``
checks) and the reader every session uses (without pydantic) agree on defaults, limits and
what is wrong, each wrong value one line naming the key."""

from __future__ import annotations

import pytest
from hermes_plugin_skills.section_model import SkillsConfig
from hermes_plugin_skills.settings import skills_settings

from hermes_commons.sections import section_settings


def test_the_reader_and_the_model_have_the_same_defaults():
    read = skills_settings({})
    model = SkillsConfig()
    assert (read.write_approval, read.index_chars, list(read.external_dirs)) == (
        model.write_approval,
        model.index_chars,
        model.external_dirs,
    )


def test_values_are_read_and_unknown_keys_left_out():
    config = {"skills": {"index_chars": 900, "external_dirs": ["~/more"], "index_char": 1}}
    settings = skills_settings(config)
    assert settings.index_chars == 900 and settings.external_dirs == ("~/more",)


@pytest.mark.parametrize(
    ("section", "reader", "model"),
    [
        (
            {"index_chars": 100},
            "skills.index_chars: must be a whole number of characters from 500 to 100000, "
            "got 100 (see: hermes config validate)",
            "skills.index_chars: Input should be greater than or equal to 500",
        ),
        (
            {"external_dirs": "~/one"},
            "skills.external_dirs: must be a list of folders, got '~/one'",
            "skills.external_dirs: Input should be a valid list",
        ),
        (
            {"write_approval": 2},
            "skills.write_approval: must be true or false, got 2",
            "skills.write_approval: Input should be a valid boolean",
        ),
    ],
)
def test_a_wrong_value_is_one_line_naming_the_key(section, reader, model):
    with pytest.raises(ValueError) as read:
        skills_settings({"skills": section})
    assert str(read.value) == reader
    with pytest.raises(ValueError) as validated:
        section_settings("skills", SkillsConfig, section)
    assert str(validated.value).startswith(model) and "\n" not in str(validated.value)
