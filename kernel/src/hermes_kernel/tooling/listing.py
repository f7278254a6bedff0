"""Every tool the model can be given, by toolset and plugin: ``hermes tools`` and ``/tools``
print the same lines from here."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hermes_kernel.plugins.host import PluginHost
from hermes_sdk import Kind, ToolSpec

__all__ = ["ToolRow", "describe_tool", "listing_lines", "suggest", "tool_rows"]

DESCRIPTION_WIDTH = 70


@dataclass(frozen=True)
class ToolRow:
    spec: ToolSpec
    plugin: str
    """The plugin that provides it; ``memory:NAME`` for an external memory provider's."""


def tool_rows(
    host: PluginHost, memory_tools: Iterable[ToolSpec] = (), memory: str = ""
) -> list[ToolRow]:
    """The installed tools, ordered by toolset then name."""
    rows = [
        ToolRow(p.spec, p.plugin) for p in host.provided(Kind.TOOL) if isinstance(p.spec, ToolSpec)
    ]
    rows += [ToolRow(spec, f"memory:{memory}") for spec in memory_tools]
    return sorted(rows, key=lambda row: (row.spec.toolset, row.spec.name))


def _short(text: str, width: int = DESCRIPTION_WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def listing_lines(
    rows: Iterable[ToolRow], given: Mapping[str, ToolSpec] | None = None
) -> list[str]:
    """One heading per toolset (with its plugins), one line per tool. With ``given`` (the
    tools this run gives the model), the others are marked as not given."""
    lines: list[str] = []
    by_toolset: dict[str, list[ToolRow]] = {}
    for row in rows:
        by_toolset.setdefault(row.spec.toolset, []).append(row)
    width = max((len(row.spec.name) for group in by_toolset.values() for row in group), default=0)
    for toolset, group in by_toolset.items():
        plugins = ", ".join(sorted({row.plugin for row in group}))
        lines.append(f"{toolset}  (from {plugins})")
        for row in group:
            flags = []
            if row.spec.parallel_safe:
                flags.append("read-only")
            if given is not None and row.spec.name not in given:
                flags.append("not given")
            marks = f" [{', '.join(flags)}]" if flags else ""
            lines.append(f"  {row.spec.name.ljust(width)}  {_short(row.spec.description)}{marks}")
    return lines


def describe_tool(row: ToolRow) -> list[str]:
    """What ``hermes tools show NAME`` prints: everything the model is told, and from where."""
    spec = row.spec
    flags = [
        "read-only, may run beside other tools" if spec.parallel_safe else "runs alone, in order",
        "gets the turn's context (backend, user, config)" if spec.takes_context else "",
    ]
    return [
        f"{spec.name}  (toolset {spec.toolset}, from plugin {row.plugin})",
        *(f"  {flag}" for flag in flags if flag),
        "",
        " ".join(spec.description.split()),
        "",
        "arguments (JSON schema):",
        json.dumps(dict(spec.parameters), indent=2, ensure_ascii=False, default=str),
    ]


def suggest(name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
