"""Generate docs/reference/cli.md from the click commands of ``hermes``.

Usage: python scripts/gen_cli_reference.py [--check]
With --check, exit 1 if the committed file is stale (tests/test_docs.py does the same).
The built-in commands come first, then every command of this repository's plugins (all
installed in the workspace environment), grouped by plugin. They are built the way
``hermes NAME`` builds them, in a throwaway home with only those plugins enabled, so what is
installed or configured besides them changes nothing here.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from hermes_kernel.cli.main import HermesGroup
    from hermes_kernel.plugins.records import PluginRecord

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference" / "cli.md"


def _usage(command: click.Command, path: str) -> str:
    context = click.Context(command, info_name=path)
    return " ".join(command.collect_usage_pieces(context))


def _section(command: click.Command, path: str, depth: int, recurse: bool = True) -> list[str]:
    lines = [f"{'#' * depth} `{path}`", ""]
    help_text = inspect.cleandoc(command.help or "")
    if help_text:
        lines += [help_text.replace("\b\n", ""), ""]
    lines += ["```", f"{path} {_usage(command, path)}".rstrip(), "```", ""]
    rows = []
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            names = ", ".join(f"`{name}`" for name in [*param.opts, *param.secondary_opts])
            if param.metavar:
                names += f" {param.metavar}"
            elif not param.is_flag and isinstance(param.type, click.Choice):
                names += " " + "\\|".join(str(choice) for choice in param.type.choices)
            text = (param.help or "").replace("|", "\\|")
            if param.show_default and param.default not in (None, False):
                text += f" (default: {param.default})"
            rows.append(f"| {names} | {text} |")
    if rows:
        lines += ["| option | meaning |", "|---|---|", *rows, ""]
    if recurse and isinstance(command, click.Group):
        from hermes_kernel.cli.main import HermesGroup

        context = click.Context(command, info_name=path)
        # A kernel group's own commands only: what plugins add to it is under each plugin.
        names = (
            sorted(command.commands)
            if isinstance(command, HermesGroup)
            else command.list_commands(context)
        )
        for name in names:
            sub = command.commands.get(name) or command.get_command(context, name)
            if sub is not None:
                lines += _section(sub, f"{path} {name}", min(depth + 1, 4))
    return lines


def _workspace_plugins() -> dict[str, tuple[str, list[str]]]:
    """Plugin name -> (distribution, the commands its manifest declares), for plugins/."""
    found = {}
    for pyproject in sorted(ROOT.glob("plugins/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        entry_points = project.get("entry-points", {})
        commands = [
            key.removeprefix("command.")
            for key in entry_points.get("hermes.provides", {})
            if key.startswith("command.")
        ]
        for name in entry_points.get("hermes.plugins", {}):
            found[name] = (project["name"], sorted(commands))
    return found


@contextlib.contextmanager
def _only(plugins: list[str]) -> Iterator[click.Context]:
    """The ``hermes`` context in a throwaway home with only ``plugins`` enabled. The process
    is left as it was (tests/test_docs.py renders in the test process): the environment,
    and the ``hermes`` logger that the command's set-up points at stderr."""
    from hermes_kernel.cli.main import cli

    controls = {"HERMES_LOAD_PLUGINS": ",".join(plugins), "HERMES_DISABLE_PLUGINS": None}
    saved = {name: os.environ.get(name) for name in controls}
    logger = logging.getLogger("hermes")
    logged = (list(logger.handlers), logger.level, logger.propagate)
    with tempfile.TemporaryDirectory() as home:
        try:
            for name, value in controls.items():
                _set(name, value)
            with cli.make_context("hermes", ["--home", home]) as context:
                yield context
        finally:
            for name, value in saved.items():
                _set(name, value)
            handlers, level, logger.propagate = logged
            logger.handlers[:] = handlers
            logger.setLevel(level)


def _set(variable: str, value: str | None) -> None:
    os.environ.pop(variable, None)
    if value is not None:
        os.environ[variable] = value


def _offered(root: click.Context) -> dict[str, tuple[PluginRecord, HermesGroup, click.Context]]:
    """Each plugin command by its dotted path (``backup``, ``plugins.install``), with the
    plugin declaring it and the kernel group and context it is looked up in."""
    from hermes_kernel.cli.main import _BUILTINS, HermesGroup, cli

    top = cli.plugin_commands(root)
    found = {name: (record, cli, root) for name, record in top.items()}

    def walk(group: click.Group, path: str, parent: click.Context) -> None:
        """The plugins' commands of a group and of every group inside it."""
        context = click.Context(group, info_name=path.rpartition(".")[2], parent=parent)
        if not isinstance(group, HermesGroup):
            return
        for name, record in group.plugin_commands(context).items():
            found[f"{path}.{name}"] = (record, group, context)
        for name in group.own_commands(context):
            inner = group.own_command(context, name)
            if isinstance(inner, click.Group):
                walk(inner, f"{path}.{name}", context)

    # The kernel's groups, and the plugins' own (hermes gateway install is another plugin's).
    for group_name in sorted({*_BUILTINS, *top}):
        group = cli.get_command(root, group_name)
        if isinstance(group, click.Group):
            walk(group, group_name, root)
    return found


def _plugin_sections() -> list[str]:
    workspace = _workspace_plugins()
    lines: list[str] = []
    with _only(sorted(workspace)) as root:
        by_plugin: dict[str, list[str]] = {}
        records = {}
        offered = _offered(root)
        for name, (record, _, _) in offered.items():
            if workspace.get(record.name, ("",))[0] == record.distribution:
                by_plugin.setdefault(record.name, []).append(name)
                records[record.name] = record
        for plugin, (distribution, commands) in sorted(workspace.items()):
            if sorted(by_plugin.get(plugin, [])) != commands:
                raise SystemExit(
                    f"gen_cli_reference: plugin {plugin} ({distribution}) declares commands "
                    f"{commands} but this environment offers {sorted(by_plugin.get(plugin, []))}"
                    "; sync every workspace package first (scripts/bootstrap.sh)"
                )
        for plugin in sorted(by_plugin):
            record = records[plugin]
            lines += [f"## Plugin `{plugin}`", ""]
            if record.summary:
                lines += [record.summary, ""]
            lines += [f"Installed with `{record.distribution}`.", ""]
            for name in sorted(by_plugin[plugin]):
                _, group, context = offered[name]
                command = group.get_command(context, name.rpartition(".")[2])
                assert command is not None, f"plugin {plugin} declares {name} but gives none"
                lines += _section(command, f"hermes {name.replace('.', ' ')}", 3)
    return lines


def render() -> str:
    from hermes_kernel.cli.main import _BUILTINS, cli

    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated from the click commands by scripts/gen_cli_reference.py;",
        "     do not edit by hand. -->",
        "",
        "The built-in commands come first, then the commands of the plugins in this",
        "repository, grouped by plugin: each is there when its plugin is installed and enabled.",
        "`hermes --help` lists what is installed, each plugin command with its plugin's name.",
        "",
    ]
    root = click.Context(cli, info_name="hermes")
    lines += _section(cli, "hermes", 2, recurse=False)  # its commands follow, one by one
    for name in sorted(_BUILTINS):
        command = cli.get_command(root, name)
        assert command is not None
        lines += _section(command, f"hermes {name}", 2)
    lines += _plugin_sections()
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    from _generated import write_or_check

    return write_or_check(REFERENCE, render(), "python scripts/gen_cli_reference.py")


if __name__ == "__main__":
    sys.exit(main())
