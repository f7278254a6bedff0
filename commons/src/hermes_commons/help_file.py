"""The help file: what a plugin's commands do, readable without importing the plugin.

``hermes --help`` lists every installed plugin's commands from package metadata alone (the
``hermes.provides`` manifest), so a plugin is imported only when its command runs. The
manifest names a command but cannot say what it does: entry-point values must be object
references. So a plugin ships ``hermes-help.toml`` in its top-level package, beside its
code, mapping manifest keys to the one-line description its spec carries::

    "command.serve" = "Serve the agent as an OpenAI-compatible HTTP API."

:class:`~hermes_testkit.PluginTests` checks that every command the plugin registers has
its line and that each line is the spec's description, so the two never drift. A plugin that
is a single module (not a package) has no folder of its own for the file; its commands are
listed with their plugin's name only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from hermes_sdk.specs import Kind, Spec, manifest_key, parse_manifest_key

__all__ = ["HELP_FILE", "help_file_of", "help_problems", "parse_help"]

HELP_FILE = "hermes-help.toml"


def help_file_of(module: str) -> Path | None:
    """Where the help file of the plugin whose entry point names ``module`` (``pkg.mod``,
    or ``pkg.mod:attr``) lives: in its top-level package's folder, found without importing
    it. None when that is not a package on the path (the file itself may not exist)."""
    import importlib.util

    top = module.partition(":")[0].strip().partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: finds, never imports
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(folders[0]) / HELP_FILE if folders else None


def parse_help(text: str) -> dict[tuple[Kind, str], str]:
    """A help file's lines by (kind, name). Raises ValueError naming what is wrong."""
    import tomllib  # only a discovery scan reads help files: keep it out of start-up

    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{HELP_FILE} is not valid TOML: {exc}") from None
    lines: dict[tuple[Kind, str], str] = {}
    for key, value in table.items():
        if not isinstance(value, str) or "\n" in value.strip() or not value.strip():
            raise ValueError(f"{HELP_FILE}: {key!r} must be one line of text")
        try:
            lines[parse_manifest_key(key)] = value.strip()
        except ValueError as exc:
            raise ValueError(f"{HELP_FILE}: {exc}") from None
    return lines


def help_problems(lines: Mapping[tuple[Kind, str], str], specs: Iterable[Spec]) -> list[str]:
    """What a plugin that registered ``specs`` gets wrong in its help file's ``lines``: a
    command without its description there, or a line that is not the description of what
    it names. Each problem is one sentence with its fix."""
    described = {(spec.kind, spec.name): spec.description for spec in specs}
    problems = []
    for (kind, name), text in sorted(described.items()):
        if kind is not Kind.COMMAND or lines.get((kind, name)) == text:
            continue
        if not text:
            problems.append(f"command {name!r} has no description; give its CommandSpec one")
        else:
            problems.append(
                f"{HELP_FILE} does not describe command {name!r} as its spec does; "
                f"write: {manifest_key(kind, name)!r} = {text!r}"
            )
    for (kind, name), text in sorted(lines.items()):
        if (kind, name) not in described:
            problems.append(
                f"{HELP_FILE} describes {kind.value} {name!r}, which the plugin does not register"
            )
        elif kind is not Kind.COMMAND and described[kind, name] != text:
            problems.append(
                f"{HELP_FILE} does not describe {kind.value} {name!r} as its spec does; "
                f"write: {manifest_key(kind, name)!r} = {described[kind, name]!r}"
            )
    return problems
