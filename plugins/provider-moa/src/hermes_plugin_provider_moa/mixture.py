"""The mixture: reference models asked in parallel, then the aggregator, advised.

The aggregator is the acting model: it gets the conversation as the engine sent it (system
prompt, tools, images) with the references' answers added at its end as a note that is not
the user's words, and its reply is the turn's. The reference models get an advisory view:
the conversation as plain text (tool calls and results written inline, results shortened),
no tools, and a system prompt of their own saying they advise and act on nothing.

A reference model that fails or cannot be built is one notice and a ``[failed: ...]`` in
the note; the aggregator answers with the others. The aggregator's failure is the
response's, so the engine retries or falls back as for any model. Every call is reported in
``ModelResponse.calls`` and recorded as its own model's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hermes_plugin_provider_moa.settings import MixtureConfig, Slot, mixture_settings
from hermes_sdk.models import (
    ChatMessage,
    ModelCall,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ProviderError,
    ProviderSettings,
)

__all__ = ["ADVISOR_PROMPT", "MixtureProvider"]

ADVISOR_PROMPT = (
    "You advise another model, which acts: it reads your answer privately, next to other "
    "advisers' answers, then replies to the user and uses the tools. You cannot run tools, "
    "open files or fetch pages, so do not try, and do not apologise for it: reason from what "
    "the conversation shows. Say what you think is going on, what the acting model should "
    "do next and how, and what it may have missed or got wrong. Be direct and concrete; no "
    "preamble."
)
"""The reference models' system prompt (the conversation's own is not sent to them)."""

FOLLOW_ON = "(That is where the conversation stands. Advise the acting model on what to do next.)"
"""Added when the advisory view ends on the assistant's side (after a tool result)."""

_closing: set[asyncio.Task[None]] = set()

PENDING_KEPT = 64
"""Conversations whose last mixture call failed, remembered for their next one."""
RESULT_CHARS = 4000
"""A tool result is shortened to this in the advisory view (its head and its tail)."""


@dataclass(frozen=True, slots=True)
class _Answer:
    label: str
    text: str
    call: ModelCall | None = None
    failure: str | None = None


@dataclass(slots=True)
class _Member:
    slot: Slot
    provider: ModelProvider | None
    model: str
    problem: str | None = None
    """Why this member cannot be asked (an endpoint without its key): said on each use."""


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _shortened(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    half = RESULT_CHARS // 2
    return f"{text[:half]}\n[… {len(text) - RESULT_CHARS:,} characters left out …]\n{text[-half:]}"


def advisory_view(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation for a reference model: no system prompt, no tool messages, no
    images; each tool call and result written into the assistant's turn."""
    view: list[ChatMessage] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            line = f"[result of {message.name or 'a tool'}: {_shortened(message.content)}]"
            if view and view[-1].role == "assistant":
                view[-1] = ChatMessage("assistant", f"{view[-1].content}\n{line}".strip())
            else:
                view.append(ChatMessage("assistant", line))
            continue
        text = message.content
        if message.role == "assistant" and message.tool_calls:
            calls = "\n".join(f"[called {c.name}({c.arguments})]" for c in message.tool_calls)
            text = f"{text}\n{calls}".strip()
        if view and view[-1].role == message.role:  # two in a row: one turn of that side
            view[-1] = ChatMessage(message.role, f"{view[-1].content}\n\n{text}".strip())
        else:
            view.append(ChatMessage(message.role, text))
    if not view or view[-1].role != "user":
        view.append(ChatMessage("user", FOLLOW_ON))
    return [ChatMessage("system", ADVISOR_PROMPT), *view]


def _through_last_user(messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    return messages[: last + 1]


def _key(messages: Sequence[ChatMessage]) -> str:
    digest = hashlib.sha256()
    for message in messages:
        digest.update(f"{message.role}\x00{message.content}\x01".encode())
    return digest.hexdigest()


def advice_note(answers: Sequence[_Answer]) -> str:
    """The note added for the aggregator: each reference model's answer, marked as advice."""
    names = ", ".join(answer.label for answer in answers)
    parts = [
        "[Mixture of agents: advice for you, not the user's words]",
        f"Reference models asked: {names}.",
        "Weigh their answers below, keep what is right, and answer the user yourself (or "
        "call tools). Do not mention this note.",
    ]
    for number, answer in enumerate(answers, 1):
        body = answer.text if answer.failure is None else f"[failed: {answer.failure}]"
        parts.append(f"Answer {number}, from {answer.label}:\n{body}")
    return "\n\n".join(parts)


def with_advice(messages: Sequence[ChatMessage], note: str) -> list[ChatMessage]:
    """``messages`` with ``note`` at the end: after the user's last words when the request
    ends on them (their images kept), else as a message of its own."""
    found = list(messages)
    if found and found[-1].role == "user":
        last = found[-1]
        found[-1] = replace(last, content=f"{last.content}\n\n{note}".strip())
    else:
        found.append(ChatMessage("user", note))
    return found


class MixtureProvider:
    """:class:`~hermes_sdk.models.ModelProvider` for ``transport: moa``. Built by the model
    router with ``settings.resolve``; its members are built then (an endpoint that does not
    exist is a ValueError, one line; one that cannot be used now fails at each use)."""

    def __init__(self, settings: ProviderSettings) -> None:
        if settings.resolve is None:
            raise ValueError("this model router cannot build the models of a mixture")
        self.config: MixtureConfig = mixture_settings(settings.options)
        resolve = settings.resolve
        self.references = [self._member(slot, resolve) for slot in self.config.reference_models]
        self.aggregator = self._member(self.config.aggregator, resolve)
        if self.aggregator.provider is None:
            for member in self.references:  # built already: nothing may be left open
                self._close_later(member)
            raise ValueError(f"aggregator: {self.aggregator.problem}")
        self._asked: tuple[str, list[_Answer]] | None = None
        self._pending: dict[str, tuple[list[ModelCall], list[str]]] = {}
        """Conversation (its text through the user's last words) -> calls made and failures
        met for a response not returned yet (the aggregator failed, or the call was
        stopped): reported with that conversation's next response, so every call is
        recorded once, in its own session. One instance serves every session of an
        engine: kept per conversation, at most :data:`PENDING_KEPT`."""

    @staticmethod
    def _member(
        slot: Slot, resolve: Callable[[str, str | None], tuple[ModelProvider, str]]
    ) -> _Member:
        try:
            provider, model = resolve(slot.provider, slot.model)
        except ValueError as exc:
            return _Member(slot, None, slot.model or "?", str(exc))
        return _Member(slot, provider, model)

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        answers, fresh = await self._advice(request)
        conversation = _key(_through_last_user(request.messages))
        calls, notices = self._pending.pop(conversation, ([], []))
        if fresh:
            calls += [answer.call for answer in answers if answer.call is not None]
            notices += [
                f"mixture: {answer.label} failed: {answer.failure}"
                for answer in answers
                if answer.failure is not None
            ]
        self._pending[conversation] = (calls, notices)  # until the aggregator answers
        while len(self._pending) > PENDING_KEPT:
            self._pending.pop(next(iter(self._pending)))
        aggregator = self.aggregator
        assert aggregator.provider is not None  # refused when built
        asked = replace(
            request,
            model=aggregator.model,
            messages=with_advice(request.messages, advice_note(answers)),
            temperature=(
                aggregator.slot.temperature
                if aggregator.slot.temperature is not None
                else request.temperature
            ),
        )
        response = await aggregator.provider.complete(asked, on_text)
        self._pending.pop(conversation, None)
        calls.append(ModelCall(aggregator.slot.provider, aggregator.model, response.usage))
        return replace(
            response,
            usage=ModelUsage(),
            calls=(*calls, *response.calls),
            notices=(*notices, *response.notices),
        )

    async def _advice(self, request: ModelRequest) -> tuple[list[_Answer], bool]:
        """The references' answers, and whether they were asked now (not reused): with
        ``fanout: per_turn`` they are asked once per message of the user."""
        view = advisory_view(request.messages)
        per_call = self.config.fanout == "per_call"
        key = _key(view if per_call else _through_last_user(request.messages))
        if self._asked is not None and self._asked[0] == key:
            return self._asked[1], False
        answers = list(
            await asyncio.gather(*(self._ask(m, request, view) for m in self.references))
        )
        self._asked = (key, answers)
        return answers, True

    async def _ask(
        self, member: _Member, request: ModelRequest, view: list[ChatMessage]
    ) -> _Answer:
        label = member.slot.label
        if member.provider is None:
            return _Answer(label, "", failure=_one_line(member.problem or "cannot be used"))
        asked = ModelRequest(
            model=member.model,
            messages=view,
            max_tokens=self.config.reference_max_tokens,
            temperature=member.slot.temperature,
            reasoning_effort=request.reasoning_effort,
        )
        try:
            response = await member.provider.complete(asked)
        except ProviderError as exc:
            return _Answer(label, "", failure=_one_line(str(exc)))
        except Exception as exc:  # noqa: BLE001 - a provider's own bug: this adviser is lost, not the turn
            return _Answer(label, "", failure=_one_line(f"{type(exc).__name__}: {exc}"))
        call = ModelCall(member.slot.provider, member.model, response.usage)
        text = response.content.strip() or "(an empty answer)"
        return _Answer(label, text, call=call)

    @staticmethod
    def _close_later(member: _Member) -> None:
        if member.provider is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # built in a worker thread: close it here, on a loop of its own
            with contextlib.suppress(Exception):
                asyncio.run(member.provider.aclose())
            return
        task = loop.create_task(member.provider.aclose())
        _closing.add(task)
        task.add_done_callback(_closing.discard)

    async def aclose(self) -> None:
        for member in (*self.references, self.aggregator):
            if member.provider is not None:
                with contextlib.suppress(Exception):
                    await member.provider.aclose()
