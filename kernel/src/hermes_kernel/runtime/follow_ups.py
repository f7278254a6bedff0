"""What a turn asks next on its own, after a reply: the user's ``/steer`` notes that came
after the turn's last model call, else a standing goal's next step (see ``goals``). Each
follow-up is another run of the engine on the same :class:`~hermes_sdk.runtime.RuntimeTurn`;
the front-end sees the reply before it as an ``InterimReply``.

A stop ends the chain (and pauses the goal); so does new input (an interrupt), and a reply
that did not end as asked. A note the turn cannot take any more is said in a notice, never
dropped in silence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hermes_kernel.engine.aside import ASIDE_SECONDS
from hermes_kernel.engine.control import Stopped, TurnControl
from hermes_kernel.engine.models import ModelRoute, response_usages
from hermes_kernel.engine.run import TurnResult
from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.runtime.goals import Goals, continuation, judge
from hermes_kernel.store.state import StateStore
from hermes_sdk.models import ModelResponse

__all__ = ["FollowUps", "left_over"]


class FollowUps:
    def __init__(self, goals: Goals, store: StateStore) -> None:
        self.goals = goals
        self.store = store

    async def next(
        self,
        engine: TurnEngine,
        session_id: str,
        control: TurnControl,
        result: TurnResult,
        say: Callable[[str], None],
    ) -> str | None:
        """The message the turn goes on with, or None: it is over."""
        goal = self.goals.active(session_id)
        if control.stopped or result.status != "done":
            if goal is not None and control.stopped:
                goal.paused = True
                say("goal paused by the stop; /goal resume goes on")
            return None
        if control.soft.is_set():  # new input is waiting: it goes first
            return None
        if control.steers:
            return _notes(control)
        if goal is None or not goal.started:
            return None
        route = engine.routes[0]
        try:
            verdict, response = await control.race(
                asyncio.wait_for(judge(route, goal, result.text), ASIDE_SECONDS)
            )
        except Stopped:
            goal.paused = True
            say("goal paused by the stop; /goal resume goes on")
            return None
        except (RuntimeError, TimeoutError) as exc:
            goal.paused = True
            say(f"goal paused: {str(exc) or 'the judge did not answer in time'}")
            return None
        if response is not None:
            await self._count(session_id, route, response, engine)
        if control.stopped or control.soft.is_set():
            return None
        if control.steers:  # said while the judge thought: the user comes first
            return _notes(control)
        if verdict.done:
            self.goals.clear(session_id)
            say(f"goal achieved: {verdict.reason}")
            return None
        if goal.used >= goal.budget:
            goal.paused = True
            say(f"goal paused: {goal.used}/{goal.budget} turns used; /goal resume goes on")
            return None
        goal.used += 1
        say(f"continuing towards the goal ({goal.used}/{goal.budget}): {verdict.reason}")
        return continuation(goal, verdict.reason)

    async def _count(
        self, session_id: str, route: ModelRoute, response: ModelResponse, engine: TurnEngine
    ) -> None:
        """The judge's call is paid for like any: in the session's usage and budget."""
        store = self.store
        for counted in response_usages(route, response, engine.parts.pricing):
            await store.db.run(store.sessions.add_usage, session_id, counted)


def _notes(control: TurnControl) -> str:
    notes, control.steers = control.steers, []
    return "\n".join(notes)


def left_over(control: TurnControl) -> str | None:
    """Notes that came too late for the turn (it ended otherwise than done, or between its
    last check and its end): one line saying so, or None."""
    if not control.steers:
        return None
    notes, control.steers = control.steers, []
    return f"not taken, the turn had ended: {' / '.join(notes)} (send it as a message)"
