"""A runtime for a front-end's own command (a server, an editor's bridge): the agent of
this home in this process. Messages for chat platforms go to the delivery ledger, which the
gateway running for the same home sends within a second or two."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_kernel.providers.ladder import NoProvider
from hermes_kernel.runtime.agent import Agent, AgentOptions
from hermes_kernel.runtime.kernel_runtime import Deliver, KernelRuntime, tools_runtime
from hermes_kernel.runtime.questions import TurnQuestions
from hermes_kernel.tooling.environment import approval_policy
from hermes_sdk import Kind
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import Delivery, DeliveryUnavailable

if TYPE_CHECKING:
    from hermes_kernel.app import App

__all__ = ["RuntimeUnavailable", "open_runtime", "runtime_for_home"]


class RuntimeUnavailable(Exception):
    """No model can be used; one line that says what to do."""


@contextlib.asynccontextmanager
async def open_runtime(app: App, cwd: Path | None = None) -> AsyncIterator[KernelRuntime]:
    """The runtime, closed on exit: running turns are stopped and what they held freed.
    Raises :class:`RuntimeUnavailable` if no model can be used."""
    questions = TurnQuestions()
    try:
        agent = Agent(
            app,
            AgentOptions(),
            approver=questions.approver,
            ask_for=questions.ask_for,
            cwd=cwd,
            tool_runtime=tools_runtime,
        )
    except NoProvider as exc:
        raise RuntimeUnavailable(str(exc)) from None
    timeout = approval_policy(app.settings.raw).timeout_seconds
    runtime = KernelRuntime(
        agent, questions, deliver=_through_the_ledger(app, agent), question_timeout=timeout
    )
    try:
        yield runtime
    finally:
        await runtime.stop_all()
        await runtime.aclose_engines()
        await agent.aclose()


def _through_the_ledger(app: App, agent: Agent) -> Deliver:
    async def deliver(platform: str, chat_id: str, text: str) -> Delivery:
        from hermes_kernel.gateway.ledger import Ledger
        from hermes_kernel.gateway.status import running_pid

        home = app.settings.home
        if app.host.require(Kind.PLATFORM, platform) is None:
            raise DeliveryUnavailable(f"no platform {platform!r} is installed")
        if running_pid(home) is None:
            raise DeliveryUnavailable(
                f"no gateway runs for {home}; start it with: hermes gateway run"
            )
        ledger = Ledger(agent.store.db)
        chat = ChatRef(platform=platform, chat_id=chat_id, chat_type="private")
        delivery_id = await agent.store.db.run(ledger.reply_ready, None, chat, text)
        return Delivery(delivery_id=delivery_id, state="queued")

    return deliver


@contextlib.asynccontextmanager
async def runtime_for_home(home: str, cwd: str | None = None) -> AsyncIterator[KernelRuntime]:
    """``hermes_sdk.runtime.open_runtime`` (the ``hermes.runtime`` entry point): the runtime
    of a home outside any command."""
    from hermes_kernel.app import App
    from hermes_kernel.config.settings import Flags

    app = App(Flags(home=Path(home)))
    try:
        async with open_runtime(app, Path(cwd) if cwd else None) as runtime:
            yield runtime
    finally:
        app.close()
