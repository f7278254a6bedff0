"""Tests for hermes-plugin-dice: the SDK's conformance suite for tools plugins, and our own."""

from pathlib import Path
from typing import ClassVar

import pytest

import hermes_plugin_dice
from hermes_testkit import ToolsTests


class TestTools(ToolsTests):
    plugin = hermes_plugin_dice
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    # Every tool: (arguments, the exact text it returns). A one-sided die always shows 1.
    examples: ClassVar[dict] = {
        "roll_dice": ({"sides": 1, "count": 3}, "rolled 3d1: 1, 1, 1 (total 3)")
    }


def test_a_roll_stays_within_the_sides():
    for _ in range(100):
        total = int(hermes_plugin_dice.roll_dice(sides=6).rsplit(" ", 1)[1].rstrip(")"))
        assert 1 <= total <= 6


def test_an_impossible_roll_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="roll 1 to 100 dice"):
        hermes_plugin_dice.roll_dice(count=0)
