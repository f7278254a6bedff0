"""Spending limits (``budget:`` in config.yaml, or a session's own through
:class:`~hermes_sdk.runtime.SessionOptions`). A module of its own, small, because the kernel's
turn engine needs it on every start and the rest of the runtime contract is not cheap."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Budget"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """Spending limits, checked before every model call: a call that would pass one is not
    made, and the turn ends (status ``budget``) saying which. None: no limit (or, in
    :class:`~hermes_sdk.runtime.SessionOptions`, config.yaml's ``budget:``)."""

    session_max_tokens: int | None = None
    session_max_cost_usd: float | None = None
    turn_max_cost_usd: float | None = None
