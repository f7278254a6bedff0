"""The ACP agent: editor sessions as Hermes sessions, prompt turns with streamed updates.

A prompt's text (and the text of resources the editor embeds) is the user's message; its
images, audio and binary resources (a PDF) come with it as attachments. The
reply streams as agent message chunks; each tool call is a tool call update (started, then
completed or failed with its output); an approval question is a permission request the
editor answers; ``session/cancel`` stops the turn, and the prompt ends "cancelled".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Mapping
from importlib.metadata import version
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_available_commands
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    Implementation,
    PermissionOption,
    PermissionOptionKind,
    PromptCapabilities,
    StopReason,
    ToolCallUpdate,
    ToolKind,
    UnstructuredCommandInput,
)

from hermes_commons.media_urls import from_data_url
from hermes_commons.text import one_line
from hermes_sdk.following import TurnWatcher, follow_turn, trouble
from hermes_sdk.media import Attachment, AttachmentKind, MediaCache, MediaRefused
from hermes_sdk.runtime import (
    Question,
    Runtime,
    SessionBusy,
    SessionNotFound,
    SessionOptions,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)

__all__ = ["HermesAgent", "UnusableAgent"]

log = logging.getLogger("hermes.acp")

SOURCE = "acp"
SLASH_COMMAND = re.compile(r"/([a-z][\w-]*)(?:\s+(.*))?$", re.DOTALL)
"""What a command looks like: "/etc/hosts: what is this?" is a message, not a command."""
SESSION_ENDING = frozenset({"new", "reset"})
"""Commands the editor does itself (a new thread): its session id stays this session's."""
OUTPUT_SHOWN = 4000
"""Characters of a tool's output shown in the editor (the model gets all of it)."""
STOP_REASONS: dict[str, StopReason] = {
    "done": "end_turn",
    "stopped": "cancelled",
    "interrupted": "cancelled",
    "budget": "max_turn_requests",
}
ANSWER_KINDS: dict[str, PermissionOptionKind] = {
    "once": "allow_once",
    "session": "allow_always",
    "always": "allow_always",
    "command": "allow_always",
    "deny": "reject_once",
}
TOOL_KINDS: dict[str, ToolKind] = {
    "terminal": "execute",
    "read_file": "read",
    "search_files": "search",
    "write_file": "edit",
    "patch": "edit",
}


def _prompt_text(blocks: list[Any]) -> str:
    """The user's message: text blocks, and embedded text resources with their URI."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"<file uri={resource.uri!r}>\n{text}\n</file>")
        elif kind == "resource_link":
            parts.append(f"(see {block.uri})")
    return "\n\n".join(part for part in parts if part)


def _prompt_files(blocks: list[Any], cache: MediaCache) -> list[Attachment]:
    """The prompt's images, audio and embedded binary resources (a PDF the editor attached),
    each sniffed and capped as every file Hermes takes. Raises MediaRefused (one line)."""
    import base64
    import binascii

    files: list[Attachment] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind in ("image", "audio"):
            url = f"data:{block.mime_type};base64,{block.data}"
            expect: AttachmentKind = "image" if kind == "image" else "audio"
            files.append(from_data_url(url, cache, expect=expect))
        elif kind == "resource" and getattr(block.resource, "blob", None) is not None:
            resource = block.resource
            name = str(resource.uri).rstrip("/").rsplit("/", 1)[-1] or "file"
            try:
                data = base64.b64decode(resource.blob, validate=True)
            except (binascii.Error, ValueError):
                raise MediaRefused(f"{name} is refused: its blob is not valid base64") from None
            files.append(cache.ingest(data, name=name, declared=resource.mime_type))
    return files


def _hint(usage: str, name: str) -> AvailableCommandInput | None:
    """What the editor shows after ``/NAME``: the usage's words after the name."""
    words = usage.removeprefix(f"/{name}").strip()
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=words)) if words else None


def _title(event: ToolStarted) -> str:
    shown = event.arguments.get("command") or event.arguments.get("path")
    if isinstance(shown, str) and shown:
        return f"{event.tool}: {shown[:120]}"
    return event.tool


class HermesAgent(Agent):
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._conn: Client | None = None
        self._last_call: dict[str, str] = {}
        self._announcing: set[asyncio.Task[None]] = set()
        """Session -> the tool call running, which a permission request refers to."""

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def conn(self) -> Client:
        if self._conn is None:
            raise RuntimeError("no client is connected")
        return self._conn

    # --- sessions ---------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    embedded_context=True, image=True, audio=True
                ),
            ),
            agent_info=Implementation(
                name="hermes", title="Hermes", version=version("hermes-plugin-acp")
            ),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Any = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        if mcp_servers:
            log.warning("the editor's MCP servers are not used (configure mcp_servers: instead)")
        try:
            session = await self.runtime.open_session(SessionOptions(source=SOURCE, cwd=cwd))
        except ValueError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        self._announce_commands(session.session_id)
        return NewSessionResponse(session_id=session.session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        try:
            await self.runtime.resume_session(session_id)
            messages = await self.runtime.messages(session_id)
        except SessionNotFound as exc:
            raise RequestError.resource_not_found(session_id) from exc
        for message in messages:  # the editor shows the conversation so far
            if message.role == "user" and message.content:
                update: Any = update_user_message_text(message.content)
            elif message.role == "assistant" and message.content:
                update = update_agent_message_text(message.content)
            else:
                continue
            await self.conn.session_update(session_id=session_id, update=update)
        self._announce_commands(session_id)
        return LoadSessionResponse()

    def _announce_commands(self, session_id: str) -> None:
        """Tell the editor the ``/NAME`` commands (the runtime's and the plugins'), once the
        session's answer is on its way: the editor offers them as the user types ``/``."""
        commands = [
            AvailableCommand(
                name=name,
                description=spec.description,
                input=_hint(spec.shown, name),
            )
            for name, spec in self.runtime.slash_commands().items()
            if name not in SESSION_ENDING
        ]

        async def announce() -> None:
            with contextlib.suppress(Exception):  # an editor that has gone needs none
                await self.conn.session_update(
                    session_id=session_id, update=update_available_commands(commands)
                )

        task = asyncio.get_running_loop().create_task(announce())
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no methods offered: Hermes uses the keys in its own home

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        raise RequestError.method_not_found("session/set_mode")

    # --- a prompt turn ----------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = _prompt_text(prompt)
        command = SLASH_COMMAND.match(text.strip())
        if command is not None and command.group(1) in self.runtime.slash_commands():
            await self._say(session_id, await self._command(session_id, *command.groups()))
            return PromptResponse(stop_reason="end_turn")
        try:
            cache = MediaCache.of_home(self.runtime.home, self.runtime.config)
            files = await asyncio.to_thread(_prompt_files, prompt, cache)
        except MediaRefused as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        if not text and not files:
            raise RequestError.invalid_params({"details": "the prompt has no text"})
        if self.runtime.running(session_id) is None:
            try:
                await self.runtime.resume_session(session_id)
            except SessionNotFound as exc:
                raise RequestError.resource_not_found(session_id) from exc
        try:
            turn = self.runtime.start_turn(
                session_id, text, answers_questions=True, attachments=files
            )
        except SessionBusy:
            raise RequestError.invalid_request(
                {"details": "a prompt is still running in this session; cancel it first"}
            ) from None

        async def say(text: str) -> None:
            await self._say(session_id, text)

        async def ended(event: TurnEnded) -> None:
            if (line := trouble(event)) is not None:
                await self._say(session_id, f"\n\n{line}")

        watcher = TurnWatcher(
            on_text=say,  # no on_restart: text sent to the editor cannot be taken back
            on_tool_started=lambda event: self._tool_started(session_id, event),
            on_tool_finished=lambda event: self._tool_finished(session_id, event),
            on_question=lambda event: self._ask(session_id, event),
            on_end=ended,
        )
        # The editor going away mid-turn (this call cancelled) stops the turn.
        result = await follow_turn(turn, watcher, stop_if_left=True)
        return PromptResponse(stop_reason=STOP_REASONS.get(result.status, "end_turn"))

    async def _command(self, session_id: str, name: str, args: str | None) -> str:
        """A ``/NAME`` the editor sent: run by the runtime as in every front-end; its text
        is the answer. The editor starts new threads itself, so ``/new`` says so."""
        if name in SESSION_ENDING:
            return "start a new thread in the editor: this one stays as it is"
        if self.runtime.running(session_id) is None:
            with contextlib.suppress(SessionNotFound):  # the command says it is unknown
                await self.runtime.resume_session(session_id)
        try:
            reply = await self.runtime.run_slash(name, args or "", session_id)
        except (SessionBusy, SessionNotFound, ValueError, LookupError) as exc:
            return str(exc).strip("'\"")
        except Exception as exc:  # noqa: BLE001 - a plugin's command failed: one line
            log.warning("/%s failed: %s", name, exc)
            return f"/{name} failed: {one_line(str(exc), 300)}"
        return reply.text or "(nothing to show)"

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self.runtime.running(session_id)
        if turn is not None:
            turn.stop()

    # --- updates ----------------------------------------------------------------------------

    async def _say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(
            session_id=session_id, update=update_agent_message_text(text)
        )

    async def _tool_started(self, session_id: str, event: ToolStarted) -> None:
        self._last_call[session_id] = event.call_id
        await self.conn.session_update(
            session_id=session_id,
            update=start_tool_call(
                event.call_id,
                _title(event),
                kind=TOOL_KINDS.get(event.tool, "other"),
                status="in_progress",
                raw_input=_jsonable(event.arguments),
            ),
        )

    async def _tool_finished(self, session_id: str, event: ToolFinished) -> None:
        shown = event.content
        if len(shown) > OUTPUT_SHOWN:
            shown = (
                shown[:OUTPUT_SHOWN] + f"\n… ({len(event.content) - OUTPUT_SHOWN} more characters)"
            )
        await self.conn.session_update(
            session_id=session_id,
            update=update_tool_call(
                event.call_id,
                status="completed" if event.ok else "failed",
                content=[tool_content(text_block(shown))],
            ),
        )

    async def _ask(self, session_id: str, question: Question) -> None:
        """A permission request; the editor's choice answers the question."""
        options = [
            PermissionOption(
                option_id=choice.value,
                name=choice.label,
                kind=ANSWER_KINDS.get(choice.value, "allow_once"),
            )
            for choice in question.choices
        ]
        call_id = self._last_call.get(session_id, question.question_id)
        try:
            response = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=call_id,
                    title=question.command or question.text[:200],
                    status="pending",
                ),
                options=options,
            )
        except Exception as exc:  # noqa: BLE001 - an editor that cannot answer means no
            log.warning("the permission request failed: %s", exc)
            question.decline()
            return
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome):
            question.answer(outcome.option_id)
        else:
            question.decline()


def _jsonable(arguments: Mapping[str, Any]) -> Any:
    try:
        json.dumps(arguments)
    except (TypeError, ValueError):
        return {key: str(value) for key, value in arguments.items()}
    return dict(arguments)


class UnusableAgent(Agent):
    """What ``hermes acp`` serves when no model can be used: the handshake works, and every
    session request fails with the one line that says what to do (the editor shows it)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(
                name="hermes", title="Hermes", version=version("hermes-plugin-acp")
            ),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Any = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        raise RequestError.internal_error({"details": self.problem})

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        raise RequestError.internal_error({"details": self.problem})

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        raise RequestError.internal_error({"details": self.problem})
