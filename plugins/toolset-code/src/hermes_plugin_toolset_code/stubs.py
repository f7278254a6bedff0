"""The ``hermes_tools`` functions a script calls, written from the tools' JSON schemas, and
the list of them the model reads in ``execute_code``'s description.

A function takes its tool's arguments as keyword arguments (``terminal(command="ls")``;
the required ones in order too); an argument left out is not sent, so the tool's own
default applies. A tool whose name or
arguments are not Python names is still reachable with ``call_tool(name, **arguments)``.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence

from hermes_sdk import ToolSpec

__all__ = ["function_lines", "module_source", "signature"]

_SUMMARY_CHARS = 110


def _is_name(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)


def _arguments(spec: ToolSpec) -> tuple[list[str], list[str], bool]:
    """(required names, optional names, whether some argument is not a Python name)."""
    properties = spec.parameters.get("properties")
    names = list(properties) if isinstance(properties, Mapping) else []
    required_list = spec.parameters.get("required")
    required = set(required_list) if isinstance(required_list, list) else set()
    usable = [name for name in names if _is_name(name)]
    return (
        [name for name in usable if name in required],
        [name for name in usable if name not in required],
        len(usable) < len(names),
    )


def signature(spec: ToolSpec) -> str:
    """How the model writes a call: ``terminal(command, timeout=...)``."""
    required, optional, more = _arguments(spec)
    parts = [*required, *(f"{name}=..." for name in optional)]
    if more:
        parts.append("**more")
    return f"{spec.name}({', '.join(parts)})"


def _summary(description: str) -> str:
    text = " ".join(description.split())
    end = text.find(". ")
    if 0 < end < _SUMMARY_CHARS:
        return text[: end + 1]
    return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"


def function_lines(tools: Sequence[ToolSpec]) -> list[str]:
    """One line per function: its call and what the tool does."""
    return [f"- {signature(spec)}: {_summary(spec.description)}" for spec in tools]


def _function(spec: ToolSpec) -> str:
    required, optional, more = _arguments(spec)
    # Required arguments may be given in order too (``read_file("a.md")``), as the
    # description writes them; optional ones only by name.
    parameters = [*required, *(["*", *(f"{name}=_UNSET" for name in optional)] if optional else [])]
    if more:
        parameters.append("**more")
    head = f"def {spec.name}({', '.join(parameters)}):"
    sent = ", ".join(f"{name!r}: {name}" for name in [*required, *optional])
    body = [
        f"    {_summary(spec.description)!r}",
        f"    arguments = {{{sent}}}",
    ]
    if more:
        body.append("    arguments.update(more)")
    body.append(f"    return call_tool({spec.name!r}, **_given(arguments))")
    return "\n".join([head, *body])


def module_source(tools: Sequence[ToolSpec]) -> str:
    """The functions of ``hermes_tools`` (its ``call_tool`` comes from the program)."""
    named = [spec for spec in tools if _is_name(spec.name)]
    blocks = [_function(spec) for spec in named]
    names = ["call_tool", "ToolCallRefused", *(spec.name for spec in named)]
    header = (
        "_UNSET = object()\n\n\n"
        "def _given(arguments):\n"
        "    return {key: value for key, value in arguments.items() if value is not _UNSET}\n"
    )
    return header + "\n\n" + "\n\n\n".join(blocks) + f"\n\n\n__all__ = {names!r}\n"
