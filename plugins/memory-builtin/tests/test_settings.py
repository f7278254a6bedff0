"""The ``memory:`` section is this plugin's: its model (what ``hermes config validate``
checks) and the reader every session uses (without pydantic) agree on defaults, limits and
what is wrong, each wrong value one line naming the key."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from hermes_plugin_memory_builtin.section_model import MemoryConfig
from hermes_plugin_memory_builtin.settings import DEFAULTS, memory_settings

from hermes_commons.sections import section_settings


def test_the_reader_and_the_model_have_the_same_defaults():
    assert asdict(memory_settings({})) == MemoryConfig().model_dump() == asdict(DEFAULTS)


def test_values_are_read_and_unknown_keys_left_out():
    config = {"memory": {"memory_chars": 3000, "write_approval": True, "mem_chars": 1}}
    settings = memory_settings(config)
    assert settings.memory_chars == 3000 and settings.write_approval is True
    assert section_settings("memory", MemoryConfig, config["memory"]).memory_chars == 3000


@pytest.mark.parametrize(
    ("section", "reader", "model"),
    [
        (
            {"memory_chars": 50},
            "memory.memory_chars: must be a whole number of characters from 200 to 100000, "
            "got 50 (see: hermes config validate)",
            "memory.memory_chars: Input should be greater than or equal to 200",
        ),
        (
            {"share_agent_notes": "yes please"},
            "memory.share_agent_notes: must be true or false, got 'yes please'",
            "memory.share_agent_notes: Input should be a valid boolean",
        ),
        (
            {"provider": "Not A Name"},
            "memory.provider: 'Not A Name' is not a plugin's memory provider name",
            "memory.provider: String should match pattern",
        ),
    ],
)
def test_a_wrong_value_is_one_line_naming_the_key(section, reader, model):
    with pytest.raises(ValueError) as read:
        memory_settings({"memory": section})
    assert str(read.value) == reader
    with pytest.raises(ValueError) as validated:
        section_settings("memory", MemoryConfig, section)
    assert str(validated.value).startswith(model) and "\n" not in str(validated.value)
