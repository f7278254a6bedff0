"""What a tool's handler may know about the turn it runs in.

A :class:`~hermes_sdk.specs.ToolSpec` with ``takes_context=True`` gets a :class:`ToolContext`
as the keyword argument ``context``. Through it a tool reaches the session's terminal backend
(built on first use, behind the kernel's safety checks), learns that the user stopped the
turn, and can ask the user a question when someone is there to answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hermes_sdk.terminal import BackendUnavailable, TerminalBackend

__all__ = ["ToolContext"]


def _nobody(question: str, choices: Sequence[str]) -> str | None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    session_id: str
    home: str
    cwd: str
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the user stops the turn: pass it to ``backend.run(cancel=...)``, and stop
    long loops when it is set."""
    get_backend: Callable[[], TerminalBackend] | None = None
    ask: Callable[[str, Sequence[str]], str | None] = _nobody

    def backend(self) -> TerminalBackend:
        """The session's terminal backend. Raises BackendUnavailable when it cannot be
        built (the kernel reports that to the model as a degraded result)."""
        if self.get_backend is None:
            raise BackendUnavailable(
                "this run has no terminal backend", "tell the user; tools that run commands fail"
            )
        return self.get_backend()

    def ask_user(self, question: str, choices: Sequence[str] = ()) -> str | None:
        """The user's answer, or None when nobody can answer here (a one-shot run without
        a terminal, a scheduled job) or the question timed out."""
        return self.ask(question, choices)
