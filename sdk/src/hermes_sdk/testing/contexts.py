"""A :class:`~hermes_sdk.tooling.ToolContext` for testing a tool against a real backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hermes_sdk.terminal import TerminalBackend
from hermes_sdk.tooling import ToolContext

__all__ = ["tool_context"]


def tool_context(
    backend: TerminalBackend,
    *,
    session_id: str = "test-session",
    home: str = "",
    answers: Callable[[str, Sequence[str]], str | None] | None = None,
) -> ToolContext:
    """A context whose ``backend()`` is ``backend`` (no kernel checks in front of it) and
    whose ``ask_user`` returns what ``answers`` says (default: nobody answers)."""
    return ToolContext(
        session_id=session_id,
        home=home,
        cwd=backend.cwd,
        get_backend=lambda: backend,
        ask=answers or (lambda question, choices: None),
    )
