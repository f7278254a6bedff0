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

from hermes_commons.help_file import HELP_FILE, help_file_of, help_problems, parse_help
from hermes_sdk import Kind, parse_manifest_key

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


def _help(home: Path, *group: str) -> str:
    """``hermes [GROUP] --help`` in a fresh process, on one line, then which plugins it
    imported."""
    script = (
        "import sys\n"
        "from hermes_kernel.cli.main import main\n"
        f"sys.argv = ['hermes', *{list(group)!r}, '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('imported:', sorted(m for m in sys.modules if m.startswith('hermes_plugin_')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    run = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return " ".join(run.stdout.split())  # click wraps long lines


def test_help_describes_each_plugin_command_without_importing_a_plugin(tmp_path):
    shown = {"": _help(tmp_path)}
    serve = "serve Serve the agent as an OpenAI-compatible HTTP API (plugin api-server)"
    assert serve in shown[""]
    for name, target in PLUGINS:
        path = help_file_of(target)
        assert path is not None
        for (_, key), text in parse_help(path.read_text(encoding="utf-8")).items():
            # A subcommand of a group (plugins.install) is listed in that group's help.
            group, _, command = key.rpartition(".")
            if group not in shown:
                shown[group] = _help(tmp_path, *group.split("."))
            sentence = text[:-1] if text.endswith(".") and not text.endswith("..") else text
            assert f"{command} {sentence} (plugin {name})" in shown[group]
    assert "plugins" in shown, "a plugin's subcommand of a kernel group is checked too"
    assert "gateway" in shown, "a plugin's subcommand of another plugin's group is too"
    for group, text in shown.items():
        # A plugin's own group is that plugin's command, built to be listed: nothing else.
        owner = {"gateway": "hermes_plugin_gateway", "skills": "hermes_plugin_skills"}.get(group)
        imported = eval(text.rpartition("imported: ")[2])
        assert all(owner and name.startswith(owner) for name in imported), (
            f"listing {group or 'hermes'} imports {imported}"
        )
