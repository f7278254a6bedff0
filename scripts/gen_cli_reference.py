"""Generate docs/reference/cli.md from the click commands of ``hermes``.

Usage: python scripts/gen_cli_reference.py [--check]
With --check, exit 1 if the committed file is stale (tests/test_docs.py does the same).
Only built-in commands are documented: plugin commands depend on what is installed.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"


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
        context = click.Context(command, info_name=path)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None:
                lines += _section(sub, f"{path} {name}", min(depth + 1, 4))
    return lines


def render() -> str:
    from hermes_kernel.cli.main import _BUILTINS, cli

    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated from the click commands by scripts/gen_cli_reference.py;",
        "     do not edit by hand. -->",
        "",
        "Plugins may add commands of their own; `hermes --help` lists what is installed.",
        "",
    ]
    root = click.Context(cli, info_name="hermes")
    lines += _section(cli, "hermes", 2, recurse=False)  # plugin commands vary: not listed
    for name in sorted(_BUILTINS):
        command = cli.get_command(root, name)
        assert command is not None
        lines += _section(command, f"hermes {name}", 2)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    from _generated import write_or_check

    return write_or_check(REFERENCE, render(), "python scripts/gen_cli_reference.py")


if __name__ == "__main__":
    sys.exit(main())
