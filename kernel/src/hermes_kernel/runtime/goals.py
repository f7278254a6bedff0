"""Standing goals (``/goal``): an objective a session keeps working towards across turns.

After each turn that ends normally, the session's model is asked on the side whether the
goal is met by the last reply. If not, the runtime starts the next turn itself, with a
continuation message, on the same :class:`~hermes_sdk.runtime.RuntimeTurn`: every
front-end sees the turns stream by as one, each reply but the last an ``InterimReply``.
The loop ends when the judge says done, the goal is paused or cleared, a stop, or
``agent.goal_turns``.
Goals are kept by the runtime that set them (a restart forgets them; ``/goal TEXT`` again).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_commons.text import one_line
from hermes_kernel.engine.aside import side_request
from hermes_kernel.engine.models import ModelRoute
from hermes_sdk.models import ModelResponse, ProviderError

__all__ = ["Goal", "Goals", "Verdict", "continuation", "judge"]

JUDGE_INSTRUCTIONS = (
    "You decide whether an assistant has achieved a goal, from its latest reply. Answer "
    "with one line: DONE: <why> if the goal is fully achieved (or cannot be achieved, and "
    "the reply says why), else CONTINUE: <what is still missing>."
)
REPLY_CHARS = 6000
"""How much of the last reply the judge reads (its end: where the outcome is said)."""
_VERDICT = re.compile(r"^\W*(DONE|CONTINUE)\b\W*(.*)$", re.IGNORECASE | re.DOTALL)


@dataclass
class Goal:
    text: str
    budget: int
    used: int = 0
    """Turns the runtime started on its own for this goal."""
    paused: bool = False
    started: bool = False
    """A turn began after the goal was set (its first, which the front-end sends): only
    then is a reply judged against it, never the reply of a turn running when it was set."""

    def status(self) -> str:
        state = "paused" if self.paused else "active"
        return f"goal ({state}, {self.used}/{self.budget} turns): {self.text}"


@dataclass(frozen=True)
class Verdict:
    done: bool
    reason: str


class Goals:
    """The goals of a runtime's sessions, by session id."""

    def __init__(self) -> None:
        self._goals: dict[str, Goal] = {}

    def get(self, session_id: str | None) -> Goal | None:
        return self._goals.get(session_id) if session_id else None

    def set(self, session_id: str, text: str, budget: int) -> Goal:
        goal = self._goals[session_id] = Goal(text=text, budget=budget)
        return goal

    def clear(self, session_id: str) -> Goal | None:
        return self._goals.pop(session_id, None)

    def begin(self, session_id: str) -> None:
        """A turn starts on the session: a goal set before it applies to it."""
        goal = self._goals.get(session_id)
        if goal is not None and not goal.paused:
            goal.started = True

    def pause(self, session_id: str) -> None:
        goal = self._goals.get(session_id)
        if goal is not None:
            goal.paused = True

    def active(self, session_id: str) -> Goal | None:
        goal = self._goals.get(session_id)
        return goal if goal is not None and not goal.paused else None


def continuation(goal: Goal, reason: str) -> str:
    """The message a turn the runtime starts for a goal begins with."""
    return (
        f"Keep working towards the goal: {goal.text}\n"
        f"Still missing, as judged from your last reply: {reason}\n"
        "Go on from where you are; when the goal is achieved, say so plainly."
    )


async def judge(route: ModelRoute, goal: Goal, reply: str) -> tuple[Verdict, ModelResponse | None]:
    """Ask the model whether ``reply`` achieves ``goal``; the verdict, and the response (for
    what the call used). An answer that is neither DONE nor CONTINUE counts as continue
    (the turn budget still bounds the loop); a model that cannot be asked raises
    RuntimeError (one line)."""
    text = f"Goal: {goal.text}\n\nThe assistant's latest reply:\n{reply[-REPLY_CHARS:]}"
    request = side_request(route, JUDGE_INSTRUCTIONS, text, max_tokens=200)
    try:
        response = await route.provider.complete(request)
    except ProviderError as exc:
        raise RuntimeError(f"the goal's judge could not be asked: {exc}") from None
    answer = response.content or ""
    found = _VERDICT.match(answer.strip())
    if found is None:
        return Verdict(False, one_line(answer, 160) or "the judge gave no verdict"), response
    reason = one_line(found.group(2), 160) or "no reason given"
    return Verdict(found.group(1).upper() == "DONE", reason), response
