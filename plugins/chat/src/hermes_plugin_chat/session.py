"""The conversation both shells (one-shot and interactive) hold on the runtime: the session
being talked in, and the options a new one opens with.

A new session is created by the first message, not before: ``/new`` twice, or a chat closed
without a word, leaves nothing behind in the session list.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hermes_sdk.following import TurnWatcher, follow_turn
from hermes_sdk.media import Attachment
from hermes_sdk.runtime import (
    ModelInfo,
    Runtime,
    RuntimeTurn,
    SessionNotFound,
    SessionOptions,
    SessionSummary,
    TurnEnded,
)

__all__ = ["SOURCE", "ChatOptions", "ChatSession", "TurnWatcher"]

SOURCE = "cli"
"""The source the terminal chat's sessions are listed under (``hermes sessions list``)."""


@dataclass(frozen=True)
class ChatOptions:
    provider: str | None = None
    model: str | None = None
    toolsets: tuple[str, ...] | None = None
    """Only tools of these toolsets; None: agent.toolsets from config, else every one."""
    yolo: bool = False
    resume: str | None = None
    continue_last: bool = False
    attachments: tuple[Attachment, ...] = ()
    """Files for the first message (``--image``, ``--file``)."""
    skills: tuple[str, ...] = ()
    """Skills loaded into a new session's prompt from its start (``--skills``)."""
    references: bool = True
    """@-references in the one-shot's query are attached (not in text piped in)."""


class ChatSession:
    """Build with :meth:`open`: raises ValueError (one line to act on) if the model asked
    for cannot be used, and SessionNotFound if the session to resume does not exist."""

    def __init__(self, runtime: Runtime, options: ChatOptions, cwd: str) -> None:
        self.runtime = runtime
        self.warnings: list[str] = []
        """Lines about the options the user should see (a toolset nobody provides)."""
        if options.skills and (options.resume or options.continue_last):
            self.warnings.append(
                "--skills loads skills into a new session; a continued one keeps its own prompt"
            )
        if options.toolsets is not None:
            from hermes_commons.sections import closest

            known = sorted(set(runtime.toolsets()))
            for name in options.toolsets:
                if name not in known:  # a typo must not become a chat with no tools
                    meant = closest(name, known)
                    guess = f" (did you mean {meant!r}?)" if meant else ""
                    raise ValueError(
                        f"unknown toolset {name!r}{guess}; installed: {', '.join(known) or 'none'}"
                    )
        self.options = options
        self.cwd = cwd
        self.provider = options.provider
        self.model = options.model
        self.yolo = options.yolo
        self.info: ModelInfo = runtime.describe_model(options.provider, options.model)
        self.session: SessionSummary | None = None
        self.turn: RuntimeTurn | None = None

    @classmethod
    async def open(cls, runtime: Runtime, options: ChatOptions, cwd: str) -> ChatSession:
        chat = cls(runtime, options, cwd)
        if options.resume:
            await chat.resume(options.resume)
        elif options.continue_last:
            latest = await runtime.latest_session(SOURCE)
            if latest is None:
                raise SessionNotFound(
                    "there is no earlier chat to continue; start one with hermes chat"
                )
            await chat.resume(latest.session_id)
        return chat

    @property
    def route(self) -> tuple[str, str]:
        return self.info.provider, self.info.model

    # --- sessions ---------------------------------------------------------------------------

    async def resume(self, reference: str) -> SessionSummary:
        """Switch to a stored session by id, unique id prefix or title."""
        found = await self.runtime.find_session(reference)
        resumed = await self.runtime.resume_session(found.session_id)
        await self.end("switched")
        self.session = resumed
        if resumed.provider and resumed.model:
            self.info = ModelInfo(provider=resumed.provider, model=resumed.model)
        if self.yolo:
            self.runtime.set_yolo(resumed.session_id, True)
        return resumed

    def forget(self) -> None:
        """The next message starts a fresh session (``/new`` ended this one)."""
        self.session = None

    async def end(self, reason: str) -> None:
        if self.session is not None:
            with contextlib.suppress(SessionNotFound):  # deleted meanwhile
                await self.runtime.end_session(self.session.session_id, reason)

    async def refresh(self) -> SessionSummary | None:
        """The session as stored now (totals after a turn)."""
        if self.session is not None:
            try:
                self.session = await self.runtime.find_session(self.session.session_id)
            except SessionNotFound:
                self.session = None
        return self.session

    async def ensure_session(self) -> str:
        if self.session is None:
            self.session = await self.runtime.open_session(
                SessionOptions(
                    source=SOURCE,
                    cwd=self.cwd,
                    toolsets=self.options.toolsets,
                    preload={"skills": self.options.skills} if self.options.skills else {},
                    provider=self.provider,
                    model=self.model,
                    yolo=self.yolo,
                )
            )
        return self.session.session_id

    # --- turns ------------------------------------------------------------------------------

    async def run_turn(
        self,
        text: str,
        watcher: TurnWatcher,
        *,
        attended: bool,
        attachments: Sequence[Attachment] = (),
        later: Callable[[str], Callable[[str], None]] | None = None,
    ) -> TurnEnded:
        """One turn, its events handed to ``watcher``; the session is opened first if this
        is its first message. ``attended``: someone can answer questions. ``later(id)``
        makes the taker of reports of work the turn's tools leave running, for the session
        ``id`` (``start_turn(later=)``)."""
        session_id = await self.ensure_session()
        turn = self.runtime.start_turn(
            session_id,
            text,
            answers_questions=attended,
            attachments=attachments,
            later=later(session_id) if later is not None else None,
        )
        self.turn = turn
        try:
            ended = await follow_turn(turn, watcher)
        finally:
            self.turn = None
        if ended.status == "error" and await self.refresh() is None:
            ended = _gone(ended)
        else:
            await self.refresh()
        return ended

    def stop(self) -> None:
        if self.turn is not None:
            self.turn.stop()

    def interrupt(self) -> None:
        if self.turn is not None:
            self.turn.interrupt()

    # --- model --------------------------------------------------------------------------

    def chose_model(self, info: ModelInfo) -> None:
        """``/model`` switched the model: this session uses it already; a session opened
        later (after ``/new``) opens with it."""
        self.provider, self.model, self.info = info.provider, info.model, info


def _gone(ended: TurnEnded) -> TurnEnded:
    """The session was deleted meanwhile (``hermes sessions delete``)."""

    return replace(ended, error=f"{ended.error}; your next message starts a new session")
