"""Every command a workspace plugin ships says what it does in the plugin's help file, exactly
as its spec does, and ``hermes --help`` shows that line and the plugin's name without
importing any plugin (with the real installed plugins)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hermes_sdk import Kind, parse_manifest_key
from hermes_sdk.help_file import HELP_FILE, help_file_of, help_problems, parse_help

REPO = Path(__file__).resolve().parents[1]


def _with_commands(folders: str) -> list[tuple[str, str]]:
    """(plugin name, entry-point target) of each plugin in ``folders`` that declares a command."""
    found = []
    for pyproject in sorted(REPO.glob(f"{folders}/pyproject.toml")):
        entry_points = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get(
            "entry-points", {}
        )
        declared = [parse_manifest_key(key) for key in entry_points.get("hermes.provides", {})]
        if any(kind is Kind.COMMAND for kind, _ in declared):
            [(name, target)] = entry_points["hermes.plugins"].items()
            found.append((name, target))
    return found


PLUGINS = _with_commands("plugins/*")  # installed in the test environment
EXAMPLES = _with_commands("docs/examples/*")  # on the tests' path only


def test_the_plugins_with_commands_are_found():
    assert {"api-server", "cron", "mcp"} <= {name for name, _ in PLUGINS}
    assert {"hello", "inbox"} <= {name for name, _ in EXAMPLES}


@pytest.mark.parametrize(
    ("name", "target"), PLUGINS + EXAMPLES, ids=[name for name, _ in PLUGINS + EXAMPLES]
)
def test_each_command_is_described_in_its_plugins_help_file(register_plugin, name, target):
    registered = register_plugin(importlib.import_module(target), name=name)
    path = help_file_of(target)
    assert path is not None and path.is_file(), f"plugin {name}: ship {HELP_FILE} beside its code"
    assert help_problems(parse_help(path.read_text(encoding="utf-8")), registered.specs) == []


def test_help_describes_each_plugin_command_without_importing_a_plugin(tmp_path):
    script = (
        "import sys\n"
        "from hermes_kernel.cli.main import main\n"
        "sys.argv = ['hermes', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('imported:', sorted(m for m in sys.modules if m.startswith('hermes_plugin_')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(tmp_path)
    run = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    shown = " ".join(run.stdout.split())  # click wraps long lines
    assert "serve Serve the agent as an OpenAI-compatible HTTP API (plugin api-server)" in shown
    for name, target in PLUGINS:
        path = help_file_of(target)
        assert path is not None
        for (_, command), text in parse_help(path.read_text(encoding="utf-8")).items():
            sentence = text[:-1] if text.endswith(".") and not text.endswith("..") else text
            assert f"{command} {sentence} (plugin {name})" in shown
    assert shown.endswith("imported: []"), "listing commands imports no plugin"
