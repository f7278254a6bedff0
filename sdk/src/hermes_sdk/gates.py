"""A plugin's answer about one tool call before it runs (the ``hermes_tool_gate`` hook): let
it run, ask the user first, refuse it, or run it with other arguments.

Every gate sees every call, of any tool, after the arguments fit the tool's schema. Gates
are asked in plugin order, each seeing the arguments as the gates before it left them, and
the strictest answer wins: one ``deny`` refuses the call (the model is told the reason),
else one ``ask`` puts the question to the user (as an approval: nobody to ask means no),
else the call runs, with the arguments the last rewrite made. A gate that raises, misses
its deadline, answers with anything but a :class:`Gate` or ``None``, or rewrites the
arguments into something the tool's schema refuses, refuses the call: a gate that fails
never opens.

    from hermes_sdk import hookimpl
    from hermes_sdk.gates import Gate

    @hookimpl
    def hermes_tool_gate(call):
        if call.tool == "write_file" and str(call.arguments.get("path", "")).endswith(".env"):
            return Gate.deny("writing .env files is off in this team")
        return None
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Gate", "GateAction"]

GateAction = Literal["allow", "ask", "deny"]
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
"""How strict each answer is: the strictest of all gates' answers wins."""


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate's answer. ``reason`` is for the user and the model (one line);
    ``arguments``, when given, replace the call's arguments (for ``allow`` and ``ask``)."""

    action: GateAction
    reason: str = ""
    arguments: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.action not in STRICTNESS:
            raise ValueError(f"a gate answers allow, ask or deny, not {self.action!r}")
        if self.action == "deny" and self.arguments is not None:
            raise ValueError("a gate that denies a call has no arguments to give it")

    @classmethod
    def allow(cls, arguments: Mapping[str, Any] | None = None, reason: str = "") -> Gate:
        """Let it run (with ``arguments`` instead, when given)."""
        return cls("allow", reason, arguments)

    @classmethod
    def ask(cls, reason: str, arguments: Mapping[str, Any] | None = None) -> Gate:
        """Ask the user first, saying ``reason``; no answer means no."""
        return cls("ask", reason, arguments)

    @classmethod
    def deny(cls, reason: str) -> Gate:
        """Refuse it; the model is told ``reason``."""
        return cls("deny", reason)
