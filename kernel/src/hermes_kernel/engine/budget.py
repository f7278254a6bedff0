"""Spending limits, checked before every model call of a turn.

``budget.session_max_tokens`` (input + output tokens), ``budget.session_max_cost_usd`` and
``budget.turn_max_cost_usd``. What a session spent is its family's: the session a person
opened and every session opened for it (other agents' work, background reviews), with what is
recorded against each (compaction summaries included); so the children's own turns are held
to the same limit as their parent's, and no work escapes it by being handed on. A call that
would pass a limit is not made: the next request's size is known before it is sent, so its
tokens (and,
at the model's input price, its least cost) are added to what was spent. The turn then ends
with status ``budget`` and one line naming the limit and how to raise it.

An unknown price is unknown, never free: when the next call's least cost cannot be known (a
model without a price, or a mixture of models, each priced as it answers) that is said once
and the limit is checked against what was spent so far; the spend the store counts leaves
calls of an unknown price out, and ``/usage`` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_kernel.store.sessions import Session, Spend
from hermes_sdk.budget import Budget
from hermes_sdk.models import ModelUsage

__all__ = ["BudgetGuard", "budget_from_config", "merged", "spending_line"]


def budget_from_config(section: Mapping[str, Any] | None) -> Budget:
    """The ``budget:`` section (validated by the kernel's config model)."""
    data = section or {}

    def number(key: str) -> float | None:
        value = data.get(key)
        return float(value) if isinstance(value, int | float) and value > 0 else None

    tokens = number("session_max_tokens")
    return Budget(
        session_max_tokens=int(tokens) if tokens is not None else None,
        session_max_cost_usd=number("session_max_cost_usd"),
        turn_max_cost_usd=number("turn_max_cost_usd"),
    )


def merged(base: Budget, override: Budget | None) -> Budget:
    """``override``'s limits where it sets them (a scheduled job's own), else ``base``'s."""
    if override is None:
        return base
    return Budget(
        session_max_tokens=override.session_max_tokens or base.session_max_tokens,
        session_max_cost_usd=override.session_max_cost_usd or base.session_max_cost_usd,
        turn_max_cost_usd=override.turn_max_cost_usd or base.turn_max_cost_usd,
    )


def _usd(amount: float) -> str:
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"


def spending_line(budget: Budget, session: Session) -> str | None:
    """``budget: 12,345 of 40,000 tokens (31%); $0.0145 of $0.0200 (72%)`` for /usage and
    ``hermes sessions show``; None when no session limit is set."""
    parts = []
    if budget.session_max_tokens:
        used = session.input_tokens + session.output_tokens
        share = used / budget.session_max_tokens * 100
        parts.append(f"{used:,} of {budget.session_max_tokens:,} tokens ({share:.0f}%)")
    if budget.session_max_cost_usd:
        share = session.estimated_cost_usd / budget.session_max_cost_usd * 100
        part = f"{_usd(session.estimated_cost_usd)} of {_usd(budget.session_max_cost_usd)}"
        part += f" ({share:.0f}%)"
        if session.unpriced_calls:
            part += f", and {session.unpriced_calls} calls at an unknown price"
        parts.append(part)
    if budget.turn_max_cost_usd:
        parts.append(f"at most {_usd(budget.turn_max_cost_usd)} a turn")
    return "budget: " + "; ".join(parts) if parts else None


@dataclass
class BudgetGuard:
    """The limits of one turn, and what it has said about them."""

    budget: Budget
    pricing: Callable[[str, ModelUsage], float | None]
    turn_start_cost: float = 0.0
    warned: set[str] = field(default_factory=set)

    @property
    def active(self) -> bool:
        b = self.budget
        return bool(b.session_max_tokens or b.session_max_cost_usd or b.turn_max_cost_usd)

    def refusal(
        self, spent: Spend, upcoming_tokens: int, model: str, notice: Callable[[str], None]
    ) -> str | None:
        """Why the next call (about ``upcoming_tokens`` of input to ``model``) must not be
        made, or None. ``spent`` is the session family's (with the sessions opened for it:
        other agents' work, reviews)."""
        budget = self.budget
        limit = budget.session_max_tokens
        if limit is not None and spent.tokens + upcoming_tokens > limit:
            return (
                f"stopped before a model call: budget.session_max_tokens is {limit:,} and this "
                f"session (with those opened for it) has used {spent.tokens:,} tokens (the "
                f"next request is about {upcoming_tokens:,}); raise budget.session_max_tokens "
                "in config.yaml, or start a new session"
            )
        if not (budget.session_max_cost_usd or budget.turn_max_cost_usd):
            return None
        least = self.pricing(model, ModelUsage(input_tokens=upcoming_tokens))
        if least is None:
            # The next call's least cost is unknown (a model without a price, or a mixture,
            # whose models are priced as they answer): what was spent still counts.
            if model not in self.warned:
                self.warned.add(model)
                notice(
                    f"the cost of a call to {model} is known only once it is made: the cost "
                    "budget is checked against what was spent (add its price to the price "
                    "table, or set a token budget)"
                )
            least = 0.0
        cost = spent.cost_usd
        session_limit = budget.session_max_cost_usd
        if session_limit is not None and (cost + least > session_limit or cost >= session_limit):
            return (
                f"stopped before a model call: budget.session_max_cost_usd is "
                f"{_usd(session_limit)} and this session (with those opened for it) has "
                f"spent {_usd(cost)} (the next request costs at least {_usd(least)}); raise "
                "budget.session_max_cost_usd in config.yaml, or start a new session"
            )
        turn_limit = budget.turn_max_cost_usd
        turn_cost = cost - self.turn_start_cost
        if turn_limit is not None and (turn_cost + least > turn_limit or turn_cost >= turn_limit):
            return (
                f"stopped before a model call: budget.turn_max_cost_usd is {_usd(turn_limit)} "
                f"and this turn has spent {_usd(turn_cost)} (the next request costs at least "
                f"{_usd(least)}); raise budget.turn_max_cost_usd in config.yaml"
            )
        return None
