"""The plugin registers what its manifest says, and importing it loads nothing heavy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import hermes_plugin_checkpoints

from hermes_testkit import PluginTests


class TestCheckpointsPlugin(PluginTests):
    plugin = hermes_plugin_checkpoints
    pyproject = Path(__file__).parents[1] / "pyproject.toml"


def test_importing_the_plugin_loads_none_of_its_work():
    code = (
        "import sys, hermes_plugin_checkpoints\n"
        "loaded = [m for m in sys.modules if m.startswith('hermes_plugin_checkpoints.')]\n"
        "print(loaded, 'pydantic' in sys.modules, 'click' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] False False"
