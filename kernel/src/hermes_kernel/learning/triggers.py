"""When a finished turn is worth a background review: a turn that taught something (a
``"lesson"`` review), or every so many user turns (a ``"periodic"`` one)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_kernel.config.defaults import (
    LEARNING_NUDGE_EVERY_TURNS,
    LEARNING_REVIEW,
    LEARNING_REVIEW_MIN_TOOL_CALLS,
)
from hermes_kernel.engine.run import TurnResult

__all__ = ["LearningSettings", "is_correction", "review_reason"]

# The openings people use to tell an agent it got something wrong. A false positive costs
# one background review that usually decides to keep nothing.
_CORRECTION = re.compile(
    r"^\W*(no\b|nope\b|wrong\b|incorrect\b|not quite\b|that'?s (not|wrong|incorrect)\b|"
    r"that is (not|wrong|incorrect)\b|actually\b|you (got|did|made) (it|that|this) wrong\b|"
    r"i (said|meant|asked)\b|don'?t do that\b|you should(n'?t| not) have\b|why did you\b|"
    r"please don'?t\b|stop doing\b)",
    re.IGNORECASE,
)


def is_correction(user_text: str) -> bool:
    return bool(_CORRECTION.match(user_text))


@dataclass(frozen=True)
class LearningSettings:
    review: bool = LEARNING_REVIEW
    review_min_tool_calls: int = LEARNING_REVIEW_MIN_TOOL_CALLS
    nudge_every_turns: int = LEARNING_NUDGE_EVERY_TURNS

    @classmethod
    def from_config(cls, raw: Mapping[str, Any]) -> LearningSettings:
        learning = raw.get("learning") or {}
        return cls(
            review=bool(learning.get("review", LEARNING_REVIEW)),
            review_min_tool_calls=int(
                learning.get("review_min_tool_calls", LEARNING_REVIEW_MIN_TOOL_CALLS)
            ),
            nudge_every_turns=int(learning.get("nudge_every_turns", LEARNING_NUDGE_EVERY_TURNS)),
        )


def review_reason(result: TurnResult, user_text: str, settings: LearningSettings) -> str | None:
    """Why this turn taught something worth a lesson review, or None."""
    if not settings.review or result.status != "done":
        return None
    if result.tool_calls >= settings.review_min_tool_calls:
        return f"it took {result.tool_calls} tool calls"
    if result.recoveries:
        return (
            f"a tool failed and then worked ({result.recoveries}x): the way found is worth keeping"
        )
    if is_correction(user_text):
        return "the user corrected the agent"
    return None
