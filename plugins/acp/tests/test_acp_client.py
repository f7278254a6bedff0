"""``hermes acp`` driven by the agent-client-protocol SDK's own client side, over the stdio
of a real ``hermes acp`` process: initialize, sessions, prompts that run tools, permission
requests answered by the client, cancel; and the front-end conformance suite."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import (
    PROTOCOL_VERSION,
    Client,
    RequestError,
    image_block,
    spawn_agent_process,
    text_block,
)
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from hermes_testkit import FrontendTests, Reply
from hermes_testkit.frontend_tests import scripted_home
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import disguised_program, photo_bytes

HERMES = str(Path(sys.executable).parent / "hermes")


class EditorClient(Client):
    """What an editor does: shows updates, answers permission requests."""

    def __init__(self) -> None:
        self.approve = True
        self.questions: list[str] = []
        self.updates: list[Any] = []
        self.text: dict[str, list[str]] = {}

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.questions.append(tool_call.title or "")
        wanted = "allow_once" if self.approve else "reject_once"
        for option in options:
            if option.kind == wanted:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if isinstance(update, AgentMessageChunk):
            self.text.setdefault(session_id, []).append(update.content.text)

    async def read_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("fs/write_text_file")


@contextlib.asynccontextmanager
async def editor(home: Path) -> AsyncIterator[tuple[Any, EditorClient]]:
    client = EditorClient()
    env = {"HERMES_HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}
    async with spawn_agent_process(
        client, HERMES, "acp", env=env, transport_kwargs={"stderr": None}
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="test-editor", version="1.0"),
        )
        yield conn, client


@pytest.fixture
def frontend_home(tmp_path: Path, openai_server: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    return scripted_home(tmp_path, openai_server, monkeypatch)


class ACPDriver:
    """The conformance suite's client: one ACP session, prompts and cancel."""

    def __init__(self, conn: Any, client: EditorClient, session_id: str) -> None:
        self.conn, self.client, self.session_id = conn, client, session_id

    @property
    def approve(self) -> bool:
        return self.client.approve

    @approve.setter
    def approve(self, value: bool) -> None:
        self.client.approve = value

    @property
    def questions(self) -> list[str]:
        return self.client.questions

    async def send(self, text: str) -> str:
        self.client.text[self.session_id] = []
        await self.conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        return "".join(self.client.text[self.session_id])

    async def stop(self) -> None:
        await self.conn.cancel(session_id=self.session_id)


class TestACPFrontend(FrontendTests):
    answers_questions = True

    @contextlib.asynccontextmanager
    async def connect(self, home: Path) -> AsyncIterator[ACPDriver]:
        async with editor(home) as (conn, client):
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            yield ACPDriver(conn, client, session.session_id)


def test_initialize_says_who_and_what(frontend_home: Path) -> None:
    async def scenario() -> Any:
        client = EditorClient()
        async with spawn_agent_process(
            client, HERMES, "acp", env={"HERMES_HOME": str(frontend_home)}
        ) as (conn, _):
            return await conn.initialize(protocol_version=PROTOCOL_VERSION)

    answer = asyncio.run(scenario())
    assert answer.protocol_version == PROTOCOL_VERSION
    assert answer.agent_info.name == "hermes"
    assert answer.agent_capabilities.load_session is True


def test_a_prompt_runs_a_tool_with_permission_and_streams_it(
    frontend_home: Path, openai_server
) -> None:
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./scratch"}, text="Let me. "),
        Reply.say("Scratch is open to everyone now."),
    )

    async def scenario() -> tuple[Any, EditorClient, str]:
        async with editor(frontend_home) as (conn, client):
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            response = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("open scratch up")]
            )
            return response, client, session.session_id

    response, client, session_id = asyncio.run(scenario())
    assert response.stop_reason == "end_turn"
    assert client.questions == ["chmod -R 777 ./scratch"]
    started = [u for u in client.updates if isinstance(u, ToolCallStart)]
    finished = [u for u in client.updates if isinstance(u, ToolCallProgress)]
    assert started[0].kind == "execute" and "chmod" in started[0].title
    assert finished[0].tool_call_id == started[0].tool_call_id and finished[0].status == "completed"
    assert "".join(client.text[session_id]).endswith("Scratch is open to everyone now.")
    assert oct((Path.cwd() / "scratch").stat().st_mode & 0o777) == "0o777"


def test_a_denied_permission_does_not_run_the_command(frontend_home: Path, openai_server) -> None:
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./scratch"}), Reply.say("Denied.")
    )
    before = (Path.cwd() / "scratch").stat().st_mode

    async def scenario() -> EditorClient:
        async with editor(frontend_home) as (conn, client):
            client.approve = False
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            return client

    client = asyncio.run(scenario())
    finished = [u for u in client.updates if isinstance(u, ToolCallProgress)]
    assert finished[0].status == "failed"
    assert (Path.cwd() / "scratch").stat().st_mode == before
    (result,) = [
        m["content"] for m in openai_server.requests[1].json["messages"] if m["role"] == "tool"
    ]
    assert "denied" in result


def test_a_session_loads_again_with_its_history(frontend_home: Path, openai_server) -> None:
    openai_server.queue(Reply.say("First answer."), Reply.say("Second answer."))

    async def first() -> str:
        async with editor(frontend_home) as (conn, _client):
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("first")])
            return str(session.session_id)

    async def second(session_id: str) -> EditorClient:
        async with editor(frontend_home) as (conn, client):
            await conn.load_session(cwd=os.getcwd(), session_id=session_id, mcp_servers=[])
            await conn.prompt(session_id=session_id, prompt=[text_block("second")])
            return client

    session_id = asyncio.run(first())
    client = asyncio.run(second(session_id))
    shown = "".join(client.text[session_id])
    assert shown.startswith("First answer.") and shown.endswith("Second answer.")
    sent = str(openai_server.requests[-1].json["messages"])
    assert "first" in sent and "First answer." in sent


def test_an_unknown_session_is_an_error_not_a_crash(frontend_home: Path) -> None:
    async def scenario() -> None:
        async with editor(frontend_home) as (conn, _client):
            with pytest.raises(RequestError):
                await conn.prompt(session_id="nope", prompt=[text_block("hi")])
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            assert session.session_id  # still serving

    asyncio.run(scenario())


def test_with_no_usable_model_the_editor_is_told_why(tmp_path: Path) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "model:\n  provider: no-such-endpoint\n  default: m\n", encoding="utf-8"
    )

    async def scenario() -> str:
        async with editor(home) as (conn, _client):
            with pytest.raises(RequestError) as raised:
                await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            return str(raised.value.data)

    assert "no-such-endpoint" in asyncio.run(scenario())


def test_an_image_block_reaches_a_model_that_sees(frontend_home: Path, openai_server) -> None:
    config = frontend_home / "config.yaml"
    config.write_text(config.read_text().replace("test-model", "test-model\n  vision: true"))
    openai_server.queue(Reply.say("A red photo."))
    photo = base64.b64encode(photo_bytes((640, 480))).decode()

    async def scenario() -> tuple[Any, str]:
        async with editor(frontend_home) as (conn, client):
            answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            blocks = [text_block("What is this?"), image_block(photo, "image/jpeg")]
            await conn.prompt(session_id=session.session_id, prompt=blocks)
            return answer, "".join(client.text[session.session_id])

    answer, shown = asyncio.run(scenario())
    assert answer.agent_capabilities.prompt_capabilities.image is True
    assert shown == "A red photo."
    ((mime, data),) = images_in(openai_server.requests[0].json)
    assert mime == "image/jpeg" and data.startswith(b"\xff\xd8")


def test_a_disguised_image_block_is_refused_in_one_line(frontend_home: Path, openai_server) -> None:
    program = base64.b64encode(disguised_program()).decode()

    async def scenario() -> RequestError:
        async with editor(frontend_home) as (conn, _client):
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            with pytest.raises(RequestError) as caught:
                await conn.prompt(
                    session_id=session.session_id,
                    prompt=[text_block("look"), image_block(program, "image/png")],
                )
            return caught.value

    error = asyncio.run(scenario())
    assert error.data == {
        "details": "image.png is refused: it is an executable program "
        "(application/x-executable) sent as an image"
    }
    assert openai_server.requests == []


def test_the_runtimes_commands_are_offered_and_run_as_in_every_front_end(
    frontend_home: Path, openai_server
) -> None:
    from acp.schema import AvailableCommandsUpdate

    openai_server.queue(Reply.say("Hello there."), Reply.say("That is not a command I know."))

    async def scenario() -> tuple[EditorClient, dict[str, str]]:
        async with editor(frontend_home) as (conn, client):
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            driver = ACPDriver(conn, client, session.session_id)
            said = {"usage before": await driver.send("/usage")}
            await driver.send("hello")
            for command in ("/title my topic", "/usage", "/undo", "/new", "/nosuch words"):
                said[command] = await driver.send(command)
            return client, said

    client, said = asyncio.run(scenario())
    (offered,) = [u for u in client.updates if isinstance(u, AvailableCommandsUpdate)]
    names = {command.name: command for command in offered.available_commands}
    assert {"help", "compact", "title", "undo", "model", "memory"} <= set(names)
    assert "new" not in names  # the editor starts new threads itself
    assert names["compact"].input is not None and names["compact"].input.root.hint == "[FOCUS]"
    assert "0 messages" in said["usage before"]
    assert said["/title my topic"] == "title set: my topic"
    assert "2 messages, 0 tool calls" in said["/usage"]
    assert said["/undo"] == "removed the last exchange (2 messages): hello"
    assert said["/new"] == "start a new thread in the editor: this one stays as it is"
    assert len(openai_server.requests) == 2  # "hello", and /nosuch went to the model as text
    assert "/nosuch words" in str(openai_server.requests[-1].json["messages"][-1])
