"""``FrontendTests``: the checks every front-end (an HTTP API, an editor's agent) passes.

Subclass it in your plugin's tests, start your front-end on the Hermes home the suite
prepares, and give the suite a client that talks to it the way your users do::

    from hermes_testkit import FrontendTests

    class TestAcmeFrontend(FrontendTests):
        answers_questions = False  # HTTP: nobody to ask, so dangerous commands are denied

        @contextlib.asynccontextmanager
        async def connect(self, home):
            async with open_runtime(home) as runtime:  # hermes_sdk.runtime
                ...start the front-end on runtime, yield a client with send / stop...

The home's config.yaml points at the ``openai_server`` fixture (a scripted model), with
manual approvals on the local terminal backend. The suite needs hermes-kernel installed
(the real runtime, never a fake one) and, for the approval check, the terminal tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

import pytest

from hermes_testkit._scripted import Reply
from hermes_testkit.openai_server import ScriptedOpenAIServer

__all__ = ["FrontendClient", "FrontendTests", "scripted_home", "service_in_thread"]

LONG_REPLY = "word " * 400  # streamed slowly: about 25 s unless stopped
RISKY = "chmod -R 777 ./scratch"  # asks for approval (world-writable), harmless in a temp dir


class FrontendClient(Protocol):
    """The suite's way to use a front-end, as its users would."""

    approve: bool
    """How the client answers an approval question the front-end shows it (yes or no)."""
    questions: list[str]
    """Approval questions the front-end showed the client so far (their text or command)."""

    async def send(self, text: str) -> str:
        """Send one message in this client's conversation (the same session each time) and
        return the reply's text once the turn is over."""
        ...

    async def stop(self) -> None:
        """Stop the turn running now, as a user of this front-end does (cancel, close)."""
        ...


class _ServesWhenReady(Protocol):
    ready: asyncio.Event

    async def run(self, runtime: Any) -> None: ...


ServiceT = TypeVar("ServiceT", bound=_ServesWhenReady)


@contextlib.contextmanager
def service_in_thread(home: Path, service: ServiceT) -> Iterator[ServiceT]:
    """Run a front-end service (an object with ``run(runtime)`` and a ``ready`` event) on
    the real runtime of ``home``, in a thread with its own event loop, as the gateway or
    its own command runs it; yields it once ready, so a synchronous test can call it over
    the network. Cancelled, and its runtime closed, on exit; a failure to start is raised."""
    from hermes_sdk.runtime import open_runtime

    loop = asyncio.new_event_loop()
    started = threading.Event()
    failed: list[BaseException] = []

    async def main() -> None:
        async with open_runtime(home) as runtime:
            task = asyncio.ensure_future(service.run(runtime))
            waiter = asyncio.ensure_future(service.ready.wait())
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            started.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def thread_main() -> None:
        try:
            loop.run_until_complete(main())
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            failed.append(exc)
            started.set()

    thread = threading.Thread(target=thread_main, daemon=True)
    thread.start()
    assert started.wait(30), "the service did not start in 30 s"
    if failed:
        raise failed[0]
    try:
        yield service
    finally:
        for task in asyncio.all_tasks(loop):
            loop.call_soon_threadsafe(task.cancel)
        thread.join(30)
        loop.close()


def _run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


async def _until(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for the front-end")
        await asyncio.sleep(0.02)


def scripted_home(
    tmp_path: Path, openai_server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A Hermes home whose model is ``openai_server``, with manual approvals on the local
    backend; HERMES_HOME points at it and the working directory is a fresh folder holding
    an empty ``scratch/``. Returns the home."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    work = tmp_path / "work"
    (work / "scratch").mkdir(parents=True)
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "approvals:\n  mode: manual\n  timeout_seconds: 8\n"
        "agent:\n  backend: local\n  retries: 1\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.chdir(work)
    return home


def _has_terminal_tool() -> bool:
    return any(point.name == "tool.terminal" for point in entry_points(group="hermes.provides"))


class FrontendTests:
    answers_questions: ClassVar[bool] = False
    """True if the front-end shows approval questions to its user (an editor); False if
    nobody can answer them (an HTTP API, a scheduled job): they must then be denied."""

    def connect(self, home: Path) -> AbstractAsyncContextManager[FrontendClient]:
        """Start the front-end on the Hermes home ``home`` and yield a connected client;
        stop the front-end on exit."""
        raise NotImplementedError("subclass FrontendTests and implement connect(home)")

    # --- the home ---------------------------------------------------------------------------

    @pytest.fixture
    def frontend_home(
        self,
        tmp_path: Path,
        openai_server: ScriptedOpenAIServer,
        monkeypatch: pytest.MonkeyPatch,
    ) -> Path:
        return scripted_home(tmp_path, openai_server, monkeypatch)

    # --- the checks -------------------------------------------------------------------------

    def test_a_turn_answers(self, frontend_home: Path, openai_server: ScriptedOpenAIServer) -> None:
        openai_server.queue(Reply.say("Four."))

        async def scenario() -> None:
            async with self.connect(frontend_home) as client:
                reply = await asyncio.wait_for(client.send("What is 2 + 2?"), 30)
                assert "Four." in reply, f"the reply was {reply!r}"

        _run(scenario)
        assert openai_server.requests, "the front-end never asked the model"
        asked = openai_server.requests[0].json["messages"]
        assert any("What is 2 + 2?" in str(m.get("content")) for m in asked), asked

    def test_a_conversation_continues_in_one_session(
        self, frontend_home: Path, openai_server: ScriptedOpenAIServer
    ) -> None:
        openai_server.queue(Reply.say("Noted: blue."), Reply.say("You said blue."))

        async def scenario() -> None:
            async with self.connect(frontend_home) as client:
                await asyncio.wait_for(client.send("My colour is blue."), 30)
                reply = await asyncio.wait_for(client.send("What colour did I say?"), 30)
                assert "You said blue." in reply, f"the reply was {reply!r}"

        _run(scenario)
        second = str(openai_server.requests[-1].json["messages"])
        assert "My colour is blue." in second and "Noted: blue." in second, (
            "the second message was sent without the first exchange: not one session"
        )

    def test_a_stop_stops_the_turn(
        self, frontend_home: Path, openai_server: ScriptedOpenAIServer
    ) -> None:
        openai_server.queue(
            Reply.say(LONG_REPLY, chunk_delay_seconds=0.05), Reply.say("Still here.")
        )

        async def scenario() -> None:
            async with self.connect(frontend_home) as client:
                first = asyncio.ensure_future(client.send("Tell me a long story."))
                await _until(lambda: len(openai_server.requests) >= 1)
                await asyncio.sleep(0.3)
                await client.stop()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(first, 10)
                # Unstopped, the long reply holds the session for about 25 s more: the next
                # message is answered well within that only if the stop stopped it.
                reply = await asyncio.wait_for(client.send("Are you there?"), 15)
                assert "Still here." in reply, f"the reply was {reply!r}"

        _run(scenario)

    def test_an_approval_reaches_the_client_or_is_denied(
        self, frontend_home: Path, openai_server: ScriptedOpenAIServer
    ) -> None:
        if not _has_terminal_tool():
            pytest.skip("the terminal tool is not installed (hermes-plugin-toolset-terminal)")
        openai_server.queue(Reply.tool_call("terminal", {"command": RISKY}), Reply.say("Done."))

        async def scenario() -> list[str]:
            async with self.connect(frontend_home) as client:
                client.approve = True
                await asyncio.wait_for(client.send("Make scratch writable for everyone."), 60)
                return list(client.questions)

        questions = asyncio.run(scenario())
        results = [
            str(m.get("content"))
            for m in openai_server.requests[-1].json["messages"]
            if m.get("role") == "tool"
        ]
        assert results, "the tool call got no result"
        if self.answers_questions:
            assert any("chmod" in q for q in questions), (
                f"the approval question never reached the client: {questions}"
            )
            assert results[-1].startswith("exit code 0"), results[-1]
        else:
            assert not questions, "a front-end that cannot ask showed a question"
            assert "nobody can approve it here" in results[-1], results[-1]
