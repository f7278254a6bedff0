"""One turn's loop, and the state it keeps: the history sent to the model, the route in use,
the failing calls seen so far. See :mod:`hermes_kernel.engine.turn` for the contract."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Unpack

from hermes_commons.text import one_line
from hermes_kernel.engine.budget import BudgetGuard
from hermes_kernel.engine.compaction import MISSES_PER_TURN, summary_message
from hermes_kernel.engine.control import LinkedCancel, Stopped, TurnControl
from hermes_kernel.engine.models import ask_model, call_usage, observed, priced_usage
from hermes_kernel.engine.parts import EngineParts
from hermes_kernel.engine.tools import ToolOutcome, ToolRunner
from hermes_kernel.engine.transcript import stored_calls, to_chat
from hermes_kernel.engine.window import estimate_tokens, message_tokens, schema_tokens
from hermes_kernel.store.compactions import CompactionRecord
from hermes_kernel.store.leases import release_in, session_key
from hermes_kernel.store.messages import Disposition, Message, MessageFields, append_in
from hermes_kernel.store.sessions import Session, Usage
from hermes_sdk import ToolCall, ToolResult
from hermes_sdk.media import Attachment
from hermes_sdk.models import (
    ChatMessage,
    ModelResponse,
    ModelUsage,
    ProviderError,
    ToolCallRequest,
)
from hermes_sdk.runtime import STEER_PREFIX
from hermes_sdk.tool_calls import lenient_arguments
from hermes_sdk.tooling import NestedResult, ToolCaller


@dataclass(frozen=True)
class TurnResult:
    text: str
    status: str  # done | interrupted | stopped | error | budget | loop
    error: str | None = None
    iterations: int = 0
    tool_calls: int = 0
    recoveries: int = 0
    """Tools that failed and then, later in the turn, succeeded: the model found a way."""
    attachments: tuple[Attachment, ...] = ()
    """Files the turn's tools sent to the user, to go out with the reply."""


def _details(response: ModelResponse) -> list[dict[str, Any]] | None:
    return [dict(detail) for detail in response.reasoning_details] or None


class TurnRun:
    def __init__(
        self,
        parts: EngineParts,
        session: Session,
        holder: str,
        control: TurnControl,
        on_text: Callable[[str], None] | None,
        on_notice: Callable[[str], None] | None,
    ) -> None:
        self.parts = parts
        self.session = session
        self.holder = holder
        """Who holds the session's lease: released with the reply, in one write."""
        self.released = False
        self.control = control
        self.on_text = on_text
        self.on_notice = on_notice
        self.on_restart: Callable[[], None] | None = None
        """Called when a reply that streamed text is asked for again (the text so far is void)."""
        tool_context = parts.tool_context
        self.runner = ToolRunner(
            parts.tools,
            parts.home / "tool-results" / session.id,
            parts.secret_values,
            context=(lambda: tool_context(session, control)) if tool_context else None,
            timeout=parts.settings.tool_timeout,
        )
        self.runner.progress = self._progress
        self.runner.caller_for = self._caller_for
        self.runner.gate = self._gate
        if parts.observer.observes("transform_tool_result"):
            self.runner.transform = self._transform
        self.round_message_id: int | None = None
        """The stored id of the assistant message whose tool calls run now."""
        self.history: list[ChatMessage] = []
        self.seqs: list[int | None] = []
        """The stored seq of each history entry (None: the system prompt, a summary)."""
        self.compacted: CompactionRecord | None = None
        """The compaction the view begins with."""
        self.counted: tuple[int, int] | None = None
        """(entries, tokens): the provider's own count of the history's first entries."""
        self.compaction_misses = 0
        # After a fallback the turn stays on the route that answered; a primary that keeps
        # failing goes last for a while (parts.health).
        self.routes, self.primary_first = parts.health.order(parts.routes)
        self.route_start = 0
        self.partial: list[str] = []  # what the current model attempt has streamed
        self.failures: dict[tuple[str, str], int] = {}
        self.nested_parents: dict[str, str] = {}
        """The calling tool's call id of each nested call, by the nested call's id."""
        self.gated_arguments: dict[str, Mapping[str, Any]] = {}
        """The arguments a call ran with when a gate rewrote them, by call id: what the
        observers and transforms after the gate are shown."""
        self.calls_made = 0
        self.failed_tools: set[str] = set()
        self.recoveries = 0
        self.looping = False

    def result(
        self, text: str, status: str, iteration: int, error: str | None = None
    ) -> TurnResult:
        return TurnResult(
            text,
            status,
            error,
            iteration,
            self.calls_made,
            self.recoveries,
            tuple(self.control.outbound),
        )

    def usage(self, response: ModelResponse) -> Usage | None:
        """The call's usage against the route; None for a virtual provider's response that
        reported its calls and used nothing itself (its models' rows say it all)."""
        if response.calls and response.usage == ModelUsage():
            return None
        return call_usage(self.routes[self.route_start], response.usage, self.parts.pricing)

    def calls(self, response: ModelResponse) -> list[Usage] | None:
        """The calls a virtual provider made for ``response``, priced as their models'."""
        if not response.calls:
            return None
        pricing = self.parts.pricing
        return [
            priced_usage(call.provider, call.model, call.usage, pricing) for call in response.calls
        ]

    async def save(self, role: str, content: str | None, **fields: Any) -> int:
        return (await self.save_message(role, content, **fields)).seq

    async def save_message(self, role: str, content: str | None, **fields: Any) -> Message:
        store = self.parts.store
        return await store.db.run(store.messages.append, self.session.id, role, content, **fields)

    def remember(self, message: ChatMessage, seq: int | None) -> None:
        self.history.append(message)
        self.seqs.append(seq)

    def load_view(self, compacted: CompactionRecord | None, transcript: list[Message]) -> None:
        """The view as stored: the system prompt, the latest summary, the messages after it."""
        self.compacted = compacted
        self.remember(ChatMessage("system", self.session.system_prompt or ""), None)
        if compacted is not None:
            self.remember(summary_message(compacted), None)
        sees = self.parts.media.sees(self.routes[self.route_start])
        for message in transcript:
            chat = to_chat(message)
            if message.attachments and message.role == "user":  # a reply's files: sent, not read
                files = [Attachment.from_dict(item) for item in message.attachments]
                chat = self.parts.media.with_attachments(chat, files, sees)
            self.remember(chat, message.seq)

    async def save_reply(self, content: str | None, **fields: Unpack[MessageFields]) -> None:
        """The turn's last message, saved together with the lease's release."""
        await self.parts.store.db.run(self._reply_and_release, content, fields)
        self.released = True

    def _reply_and_release(self, content: str | None, fields: MessageFields) -> None:
        with self.parts.store.db.write(key=session_key(self.session.id)) as cursor:
            append_in(cursor, self.session.id, "assistant", content, **fields)
            release_in(cursor, self.session.id, self.holder)

    # --- the loop -----------------------------------------------------------------------

    async def run(
        self,
        transcript: list[Message],
        user_text: str,
        tool_choice: str | None = None,
        *,
        user_seq: int | None = None,
        compacted: CompactionRecord | None = None,
        attachments: tuple[Attachment, ...] = (),
    ) -> TurnResult:
        """Run the turn whose user message (seq ``user_seq``, after ``transcript``) is saved
        already. The view begins with the ``compacted`` summary when there is one."""
        if any(message.attachments for message in transcript):
            # Images are read (and made again when their prepared copy is gone) off the loop.
            await asyncio.to_thread(self.load_view, compacted, transcript)
        else:
            self.load_view(compacted, transcript)
        user = ChatMessage("user", await self.with_recall(user_text))
        if attachments:
            media = self.parts.media
            sees = media.sees(self.routes[self.route_start])
            user = await asyncio.to_thread(media.with_attachments, user, attachments, sees)
        self.remember(user, user_seq)
        settings = self.parts.settings
        guard = BudgetGuard(settings.budget, self.parts.pricing)
        if guard.active:
            store = self.parts.store
            spent = await store.db.run(store.sessions.family_spend, self.session.id)
            guard.turn_start_cost = spent.cost_usd
        for iteration in range(1, settings.max_iterations + 1):
            if self.control.soft.is_set() and iteration > 1:
                return self.result("", "interrupted", iteration - 1)
            if guard.active:
                refusal = await self.over_budget(guard)
                if refusal is not None:
                    return self.result("", "budget", iteration - 1, refusal)
            if self.control.steers:
                await self.take_steers()
            try:
                response = await self.ask_fitting(tool_choice if iteration == 1 else None)
            except Stopped:
                text = "".join(self.partial)
                if text:  # partial text is kept, marked as interrupted
                    await self.save("assistant", text, finish_reason="interrupted")
                return self.result(text, "stopped", iteration)
            except ProviderError as exc:
                return self.result("", "error", iteration, str(exc))
            if not response.tool_calls:
                if response.content and self.parts.observer.observes("transform_reply"):
                    info = self.parts.session_info(self.session)
                    reply = await self.parts.observer.transform_reply(info, response.content)
                    response = replace(response, content=reply)
                sent = [item.as_dict() for item in self.control.outbound]
                await self.save_reply(
                    response.content,
                    finish_reason=response.finish_reason,
                    reasoning=response.reasoning,
                    reasoning_details=_details(response),
                    usage=self.usage(response),
                    calls=self.calls(response),
                    attachments=sent or None,
                )
                return self.result(response.content, "done", iteration)
            await self.tool_round(response)
            if self.control.stopped:
                return self.result(response.content, "stopped", iteration)
            if self.looping:
                return self.result(
                    "",
                    "loop",
                    iteration,
                    f"the model kept repeating a failing tool call ({settings.loop_stop_after} "
                    "times); the turn stopped",
                )
        return self.result(
            "",
            "budget",
            settings.max_iterations,
            f"stopped after {settings.max_iterations} model calls (agent.max_iterations)",
        )

    async def take_steers(self) -> None:
        """The user's notes sent while the turn ran: saved as their message, so the next
        model call and every later one sees them where they were said."""
        notes, self.control.steers = self.control.steers, []
        text = STEER_PREFIX + "\n".join(notes)
        self.remember(ChatMessage("user", text), await self.save("user", text))
        self.notice(f"steered: {one_line(' / '.join(notes), 80)}")

    async def over_budget(self, guard: BudgetGuard) -> str | None:
        """Why the next model call must not be made (a limit it would pass), or None."""
        store = self.parts.store
        spent = await store.db.run(store.sessions.family_spend, self.session.id)
        model = self.routes[self.route_start].model
        return guard.refusal(spent, self.request_tokens(), model, self.notice)

    async def with_recall(self, user_text: str) -> str:
        """The user's message as the model sees it this turn: with what the external memory
        provider recalls for it and the plugins' context for this turn (neither stored, so
        the transcript holds what the user said)."""
        text = user_text
        prefetch = self.parts.prefetch
        if prefetch is not None:
            recalled = await asyncio.to_thread(prefetch, self.session, user_text)
            if recalled:
                text = f"{text}\n\n<recalled-memory>\n{recalled}\n</recalled-memory>"
        observer = self.parts.observer
        if observer.observes("turn_context"):
            info = self.parts.session_info(self.session)
            for block in await observer.turn_context(info, user_text):
                text = f"{text}\n\n{block}"
        if self.control.overlay:
            text = f"{text}\n\n<personality>\n{self.control.overlay}\n</personality>"
        return text

    # --- keeping the view within the window ---------------------------------------------

    def request_tokens(self) -> int:
        """The next request's size: the provider's count of what it saw last, plus an
        estimate of what was added since; all estimated when there is no count."""
        if self.counted is not None:
            entries, tokens = self.counted
            return tokens + sum(message_tokens(m) for m in self.history[entries:])
        return sum(message_tokens(m) for m in self.history) + schema_tokens(self.parts.schemas)

    def count(self, response: ModelResponse) -> None:
        """After the assistant message of ``response`` joined the history."""
        used = response.usage
        prompt = used.input_tokens + used.cache_read_tokens + used.cache_write_tokens
        self.counted = (len(self.history), prompt + used.output_tokens) if prompt else None

    async def ask_fitting(self, tool_choice: str | None = None) -> ModelResponse:
        """:meth:`ask`, compacting the view first when it has grown past the threshold, and
        once after a context-overflow error, which is then asked again."""
        compactor = self.parts.compactor
        if compactor is None:
            return await self.ask(tool_choice)
        if self.compaction_misses < MISSES_PER_TURN:
            route = self.routes[self.route_start]
            window = (await compactor.window(route)).tokens
            settings = compactor.settings
            fraction, reason = settings.trigger_and_reason(window, self.parts.safety_net)
            goal = int(window * fraction) if fraction is not None else None
            if goal is not None and self.request_tokens() > goal:
                await self.compact(reason, goal_tokens=goal)
        try:
            return await self.ask(tool_choice)
        except ProviderError as exc:
            if not exc.should_compress:
                raise
            overflow = exc
        if not compactor.settings.enabled and not self.parts.safety_net:
            raise ProviderError(
                overflow.kind,
                f"{overflow}; automatic compaction is off (compression.enabled): /compact, "
                "or /new to start afresh",
            )
        route = self.routes[self.route_start]
        compactor.learn(route, overflow, self.request_tokens())
        why_not = await self.compact("overflow")
        if why_not is not None:
            raise ProviderError(
                overflow.kind, f"{overflow}; compacting the conversation did not help: {why_not}"
            )
        return await self.ask(tool_choice)

    async def compact(
        self, reason: str, focus: str | None = None, goal_tokens: int | None = None
    ) -> str | None:
        """Compact the view now; None when it was, else why not (in a few words)."""
        parts = self.parts
        compactor = parts.compactor
        assert compactor is not None
        route = self.routes[self.route_start]
        window = (await compactor.window(route)).tokens
        skip = 2 if self.compacted is not None else 1  # the system prompt, the summary
        fixed = estimate_tokens(self.history[0].content) + schema_tokens(parts.schemas)
        work = compactor.compact(
            session_id=self.session.id,
            items=self.history[skip:],
            seqs=self.seqs[skip:],
            previous=self.compacted,
            fixed_tokens=fixed,
            window=window,
            route=route,
            reason=reason,
            focus=focus,
            goal_tokens=goal_tokens,
        )
        outcome = await self.control.race(work)
        for line in outcome.notices:
            self.notice(f"compaction: {line}")
        store = parts.store
        record = outcome.record
        if record is None:
            self.compaction_misses += 1
            await store.db.run(store.compactions.add_usage, self.session.id, outcome.usages)
            if self.compaction_misses >= MISSES_PER_TURN and reason != "manual":
                self.notice(
                    "compaction: not kept twice this turn; automatic compaction waits for the "
                    f"next turn ({outcome.why_not})"
                )
            return outcome.why_not or "not kept"
        earlier = self.compacted.messages_replaced if self.compacted is not None else 0
        prompt = await asyncio.to_thread(parts.rebuilt_prompt, self.session)
        await store.db.run(store.compactions.commit, record, prompt, outcome.usages)
        self.session = replace(self.session, system_prompt=prompt)
        self.compacted = record
        self.history, self.seqs = [ChatMessage("system", prompt)], [None]
        for message, seq in zip(outcome.view, outcome.seqs, strict=True):
            self.remember(message, seq)
        self.counted = None
        how = "by the model" if record.by_model else "without a model"
        self.notice(
            f"compacted {record.messages_replaced - earlier} earlier messages into "
            f"a summary written {how} (about {record.tokens_before:,} -> "
            f"{record.tokens_after:,} tokens); the full transcript is kept"
        )
        return None

    def notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)

    async def ask(self, tool_choice: str | None = None) -> ModelResponse:
        def stream(text: str) -> None:
            self.partial.append(text)
            if self.on_text is not None:
                self.on_text(text)

        def attempt() -> None:
            if self.partial:
                if self.on_restart is not None:
                    self.on_restart()
                if self.on_notice is not None:
                    self.on_notice("the reply was cut off; asking again (discard the text so far)")
            self.partial.clear()

        parts = self.parts
        response, index = await ask_model(
            self.routes[self.route_start :],
            self.session.id,
            self.history,
            parts.schemas,
            self.control,
            parts.observer,
            parts.settings.retry,
            on_text=stream,
            on_retry=self.on_notice,
            on_attempt=attempt,
            tool_choice=tool_choice,
            view=parts.media.for_route,
            reasoning_effort=self.control.reasoning_effort or parts.settings.reasoning_effort,
        )
        if self.primary_first:
            parts.health.record(self.route_start, index)
        self.route_start += index
        for line in response.notices:
            self.notice(line)
        return response

    # --- a tool round -------------------------------------------------------------------

    async def tool_round(self, response: ModelResponse) -> None:
        # Persist before execute: a crash from here on leaves calls without results, which
        # the next turn repairs instead of running them again. If a call may change the
        # world, the write is synced to disk first, so that even a power cut cannot lose
        # the record of a call that then ran; read-only calls are harmless to run twice.
        side_effects = any(
            not self.runner.is_parallel_safe(call.name) for call in response.tool_calls
        )
        stored = await self.save_message(
            "assistant",
            response.content,
            tool_calls=stored_calls(response.tool_calls),
            finish_reason=response.finish_reason,
            reasoning=response.reasoning,
            reasoning_details=_details(response),
            usage=self.usage(response),
            calls=self.calls(response),
            durable=side_effects,
        )
        seq, self.round_message_id = stored.seq, stored.id
        self.remember(
            ChatMessage(
                "assistant",
                response.content,
                tool_calls=response.tool_calls,
                reasoning_details=response.reasoning_details,
            ),
            seq,
        )
        self.count(response)
        self.calls_made += len(response.tool_calls)
        await self.runner.run_round(
            response.tool_calls, self.control, self.persist, self.before, round_key=f"m{seq}"
        )

    def tool_call(self, call: ToolCallRequest, parent_call_id: str | None = None) -> ToolCall:
        gated = self.gated_arguments.get(call.id)
        return ToolCall(
            session_id=self.session.id,
            call_id=call.id,
            tool=call.name,
            arguments=gated if gated is not None else lenient_arguments(call.arguments),
            parent_call_id=parent_call_id,
        )

    # --- calls a running tool makes -------------------------------------------------------

    def _caller_for(self, parent: ToolCallRequest) -> ToolCaller | None:
        """What the running ``parent`` call calls other tools with: each of its calls is
        numbered, recorded before it runs as the parent's child, and run as a model's is."""
        message_id = self.round_message_id
        if message_id is None:
            return None
        positions = itertools.count(1)
        tools = {name: spec for name, spec in self.runner.tools.items() if name != parent.name}

        async def run(tool: str, arguments: Mapping[str, Any]) -> NestedResult:
            return await self.run_nested(parent, message_id, next(positions), tool, arguments)

        return ToolCaller(tools, run, asyncio.get_running_loop())

    async def run_nested(
        self,
        parent: ToolCallRequest,
        message_id: int,
        position: int,
        tool: str,
        arguments: Mapping[str, Any],
    ) -> NestedResult:
        if tool == parent.name:
            return NestedResult(tool, f"error: {tool} cannot call itself", "error")
        try:
            # ASCII: text a script read from odd file names (lone surrogates) is kept as
            # escapes, which the store can hold.
            text = json.dumps(dict(arguments))
        except (TypeError, ValueError) as exc:
            return NestedResult(tool, f"error: arguments are not JSON ({exc}); not run", "error")
        call = ToolCallRequest(id=f"{parent.id}.{position}", name=tool, arguments=text)
        self.nested_parents[call.id] = parent.id
        store = self.parts.store
        begin = asyncio.ensure_future(
            store.db.run(
                store.nested.begin,
                self.session.id,
                message_id,
                parent.id,
                position,
                tool,
                text,
                durable=not self.runner.is_parallel_safe(tool),
            )
        )
        try:
            row = await asyncio.shield(begin)
        except asyncio.CancelledError:  # abandoned before it started: the record says so
            row = await begin
            skipped = ToolOutcome(
                call, "not started: the calling tool gave up on it", Disposition.SKIPPED
            )
            await asyncio.shield(
                store.db.run(store.nested.finish, row, skipped.content, skipped.disposition, 0.0)
            )
            raise
        # The call's own cancel event: set when the calling tool gives up on it, and read
        # as set when the user stops the turn, so a command it runs is killed either way.
        cancel = LinkedCancel(self.control.cancel)
        context = replace(self.runner.tool_context(), cancel=cancel)
        seen = self.tool_call(call, parent.id)
        started = time.perf_counter()
        outcome: ToolOutcome | None = None
        try:
            await observed(self.parts.observer.pre_tool_call(seen))
            outcome = await self.runner.run_one(
                call, self.control, nested=True, tool_context=context
            )
            outcome = self.runner.budgeted(outcome, f"m{message_id}-nested")
        finally:
            if outcome is None:  # cancelled (or failed) while it ran
                cancel.set()
                outcome = ToolOutcome(
                    call,
                    "abandoned by the calling tool while running: its effect is UNKNOWN",
                    Disposition.UNKNOWN,
                    time.perf_counter() - started,
                )
            after = self.tool_call(call, parent.id)  # with a gate's arguments, if it rewrote
            await asyncio.shield(self._end_nested(row, after, outcome))
        return NestedResult(tool, outcome.content, outcome.disposition.value, outcome.seconds)

    async def _end_nested(self, row: int, seen: ToolCall, outcome: ToolOutcome) -> None:
        """Complete a nested call's record, and tell observers it ended (always paired)."""
        store = self.parts.store
        # Text the store cannot encode (lone surrogates from odd bytes) is replaced, not lost.
        content = outcome.content.encode("utf-8", "replace").decode("utf-8")
        await store.db.run(store.nested.finish, row, content, outcome.disposition, outcome.seconds)
        result = ToolResult(
            call_id=seen.call_id,
            ok=outcome.disposition is Disposition.OK,
            content=content,
            duration_s=outcome.seconds,
        )
        await observed(self.parts.observer.post_tool_call(seen, result))

    def _progress(self, call: ToolCallRequest, text: str) -> None:
        """A running call's progress, to whoever shows it (any thread may report)."""
        show = self.parts.observer.tool_progress
        loop = self.control.loop
        if loop is None:
            return
        tool_call = self.tool_call(call)
        line = " ".join(text.split())[:200]
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody watches any more
            loop.call_soon_threadsafe(show, tool_call, line)

    async def _gate(
        self, call: ToolCallRequest, arguments: Mapping[str, Any]
    ) -> Mapping[str, Any] | str:
        """The plugins' gates on a call whose arguments fit its schema."""
        self.gated_arguments.pop(call.id, None)  # ids repeat across rounds: not an older one's
        seen = ToolCall(
            session_id=self.session.id,
            call_id=call.id,
            tool=call.name,
            arguments=arguments,
            parent_call_id=self.nested_parents.get(call.id),
        )
        judged = await self.parts.observer.tool_gate(seen)
        if not isinstance(judged, str) and judged != arguments:
            self.gated_arguments[call.id] = judged
        return judged

    async def _transform(self, call: ToolCallRequest, result: str) -> str:
        """A call's result through the plugins' transforms."""
        return await self.parts.observer.transform_tool_result(self.tool_call(call), result)

    async def before(self, call: ToolCallRequest) -> None:
        await observed(self.parts.observer.pre_tool_call(self.tool_call(call)))

    async def persist(self, outcome: ToolOutcome) -> None:
        settings = self.parts.settings
        content = outcome.content
        if outcome.disposition is Disposition.ERROR:
            self.failed_tools.add(outcome.call.name)
            key = (outcome.call.name, outcome.call.arguments)
            count = self.failures[key] = self.failures.get(key, 0) + 1
            if count >= settings.loop_warn_after:
                content += (
                    f"\n[this exact call has now failed {count} times; do something different]"
                )
            self.looping = self.looping or count >= settings.loop_stop_after
        elif outcome.disposition is Disposition.OK and outcome.call.name in self.failed_tools:
            self.failed_tools.discard(outcome.call.name)
            self.recoveries += 1
        seq = await self.save(
            "tool",
            content,
            tool_call_id=outcome.call.id,
            tool_name=outcome.call.name,
            disposition=outcome.disposition,
        )
        self.remember(
            ChatMessage("tool", content, tool_call_id=outcome.call.id, name=outcome.call.name),
            seq,
        )
        result = ToolResult(
            call_id=outcome.call.id,
            ok=outcome.disposition is Disposition.OK,
            content=content,
            duration_s=outcome.seconds,
        )
        await observed(self.parts.observer.post_tool_call(self.tool_call(outcome.call), result))
