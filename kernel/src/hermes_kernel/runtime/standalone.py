"""A runtime for a front-end's own command (a server, an editor's bridge, a host of chat platforms):
the agent of this home in this process, opened with the front-end's
:class:`~hermes_sdk.runtime.RuntimeOptions`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_kernel import process
from hermes_kernel.learning.review import DRAIN_SECONDS
from hermes_kernel.providers.routing import NoModel
from hermes_kernel.runtime.agent import Agent, AgentOptions
from hermes_kernel.runtime.kernel_runtime import KernelRuntime, tools_runtime
from hermes_kernel.runtime.questions import TurnQuestions
from hermes_kernel.tooling.environment import approval_policy
from hermes_sdk.runtime import RuntimeOptions

if TYPE_CHECKING:
    from hermes_kernel.app import App

__all__ = ["RuntimeUnavailable", "open_runtime", "runtime_for_home"]


class RuntimeUnavailable(Exception):
    """No model can be used; one line that says what to do."""


@contextlib.asynccontextmanager
async def open_runtime(
    app: App, options: RuntimeOptions | None = None
) -> AsyncIterator[KernelRuntime]:
    """The runtime, closed on exit: running turns are stopped and what they held freed.
    Raises :class:`RuntimeUnavailable` if no model can be used."""
    options = options or RuntimeOptions()
    questions = TurnQuestions()
    try:
        agent = Agent(
            app,
            AgentOptions(),
            approver=questions.approver,
            ask_for=questions.ask_for,
            cwd=Path(options.cwd).expanduser() if options.cwd else None,
            unattended=options.unattended,
            tool_runtime=tools_runtime,
        )
    except NoModel as exc:
        raise RuntimeUnavailable(str(exc)) from None
    timeout = options.question_timeout_s or approval_policy(app.settings.raw).timeout_seconds
    runtime = KernelRuntime(agent, questions, question_timeout=timeout, deliverer=options.deliverer)
    process.started()  # the agent is built: what follows is the front-end's own work
    try:
        yield runtime
    finally:
        await runtime.stop_all()
        await runtime.aclose_engines()
        drain = DRAIN_SECONDS if options.close_timeout_s is None else options.close_timeout_s
        await agent.aclose(review_seconds=drain)


@contextlib.asynccontextmanager
async def runtime_for_home(
    home: str, options: RuntimeOptions | None = None
) -> AsyncIterator[KernelRuntime]:
    """``hermes_sdk.runtime.open_runtime`` (the ``hermes.runtime`` entry point): the runtime
    of a home outside any command."""
    from hermes_kernel.app import App
    from hermes_kernel.config.settings import Flags

    app = App(Flags(home=Path(home)))
    try:
        async with open_runtime(app, options) as runtime:
            yield runtime
    finally:
        app.close()
