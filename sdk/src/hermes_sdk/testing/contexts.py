"""A :class:`~hermes_sdk.tooling.ToolContext` for testing a tool against a real backend."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.specs import Kind, Spec
from hermes_sdk.terminal import TerminalBackend
from hermes_sdk.tooling import HistoryHit, HistoryQuery, ToolContext

__all__ = ["tool_context"]


def tool_context(
    backend: TerminalBackend | None = None,
    *,
    session_id: str = "test-session",
    home: str = "",
    cwd: str = "",
    answers: Callable[[str, Sequence[str]], str | None] | None = None,
    source: str = "cli",
    user_scope: str | None = None,
    config: Mapping[str, Any] | None = None,
    provided: Mapping[Kind, Sequence[Spec]] | None = None,
    skill_dirs: Sequence[str] = (),
    search: Callable[[HistoryQuery], list[HistoryHit]] | None = None,
    complete: Callable[[str, str], str] | None = None,
) -> ToolContext:
    """A context whose ``backend()`` is ``backend`` (no kernel checks in front of it), whose
    ``ask_user`` returns what ``answers`` says (default: nobody answers), and whose history
    search and model are what you pass (default: unsupported). ``provided`` stands for what
    other plugins provide (``{Kind.SKILL_SOURCE: [SkillSourceSpec(...)]}``); ``skill_dirs``
    is deprecated and fills only the deprecated field of that name."""
    return ToolContext(
        session_id=session_id,
        home=home,
        cwd=backend.cwd if backend is not None else cwd,
        get_backend=(lambda: backend) if backend is not None else None,
        ask=answers or (lambda question, choices: None),
        source=source,
        user_scope=user_scope,
        config=config or {},
        provided=ProvidedSpecs(provided or {}),
        skill_dirs=tuple(skill_dirs),
        search=search,
        complete=complete,
    )
