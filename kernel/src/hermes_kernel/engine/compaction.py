"""Compaction: when a session's view outgrows the model's window, a summary replaces its older
messages in the view (the transcript in state.db keeps every one).

The kernel decides when (past ``compression.threshold`` of the window before a model call, on
a context-overflow error, on ``/compact``, at ``unattended_threshold`` where nobody can) and what
stays word for word: the last ``protect_last_n`` messages and at least
``keep_recent_tokens``, as far as they fit, always the latest round whole, and never a tool
result without its call. Every side-effecting call the summary stands for stays listed with
the head of its real output, so the model never runs it again. The context engine
(``compression.engine``) writes the summary; when it fails, a summary written without a
model takes its place. A compaction that would not shrink the view enough is not kept, and
two such in one turn stop automatic compaction until the next turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hermes_kernel.config.defaults import (
    COMPRESSION_ENGINE,
    COMPRESSION_KEEP_RECENT_TOKENS,
    COMPRESSION_PROTECT_LAST_N,
    COMPRESSION_THRESHOLD,
    COMPRESSION_UNATTENDED_THRESHOLD,
)
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.engine.summaries import SummaryModel
from hermes_kernel.engine.window import (
    DEFAULT_WINDOW,
    Window,
    configured_window,
    estimate_tokens,
    message_tokens,
)
from hermes_kernel.store.compactions import Action, CompactionRecord
from hermes_kernel.store.sessions import Usage
from hermes_sdk.context import (
    Compaction,
    CompactionRequest,
    ContextEngine,
    WindowReporter,
    plain_summary,
)
from hermes_sdk.models import ChatMessage, ProviderError

__all__ = [
    "Compactor",
    "CompressionSettings",
    "Outcome",
    "split_point",
    "summary_message",
]

log = logging.getLogger("hermes.compaction")

SMALL_WINDOW = 512_000
"""Below this window the threshold is at least 0.75, so compaction does not fire every turn."""
MIN_SAVING = 0.15
"""A compaction that saves less than this share of the view is not kept."""
MISSES_PER_TURN = 2
"""Compactions not kept in one turn before automatic compaction waits for the next turn."""
ACTION_ARGUMENT_CHARS = 200
ACTION_OUTPUT_CHARS = 240


@dataclass(frozen=True)
class CompressionSettings:
    """The ``compression:`` section as plain data (validated by config/model.py)."""

    enabled: bool = True
    engine: str = COMPRESSION_ENGINE
    threshold: float = COMPRESSION_THRESHOLD
    protect_last_n: int = COMPRESSION_PROTECT_LAST_N
    keep_recent_tokens: int = COMPRESSION_KEEP_RECENT_TOKENS
    unattended_threshold: float = COMPRESSION_UNATTENDED_THRESHOLD
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded: the window settings, and the engine's section."""

    @classmethod
    def from_config(cls, raw: Mapping[str, Any]) -> CompressionSettings:
        section = raw.get("compression")
        section = section if isinstance(section, Mapping) else {}
        defaults = cls()
        return cls(
            enabled=bool(section.get("enabled", defaults.enabled)),
            engine=str(section.get("engine") or defaults.engine),
            threshold=float(section.get("threshold", defaults.threshold)),
            protect_last_n=int(section.get("protect_last_n", defaults.protect_last_n)),
            keep_recent_tokens=int(section.get("keep_recent_tokens", defaults.keep_recent_tokens)),
            unattended_threshold=float(
                section.get(
                    "unattended_threshold",
                    section.get("gateway_threshold", defaults.unattended_threshold),
                )
            ),
            config=raw,
        )

    def trigger_and_reason(self, window: int, unattended: bool) -> tuple[float | None, str]:
        """The share of the window past which a view is compacted before a model call
        (None: automatic compaction is off here), and the reason a compaction it fires is
        recorded with: ``threshold``, or ``unattended`` when the safety net of a session
        nobody can ``/compact`` fires first."""
        fraction = self.threshold if self.enabled else None
        if fraction is not None and window < SMALL_WINDOW:
            fraction = max(fraction, 0.75)
        net = self.unattended_threshold if unattended and self.unattended_threshold > 0 else None
        if net is not None and (fraction is None or net < fraction):
            return net, "unattended"
        return fraction, "threshold"


def split_point(
    items: Sequence[ChatMessage],
    protect_last_n: int,
    keep_recent_tokens: int,
    tail_budget: int,
) -> int:
    """Where the kept tail of ``items`` (the view without its system prompt and summary)
    begins: the latest round whole (an assistant message and all its results, or the last
    user message), then earlier messages while fewer than ``protect_last_n`` or fewer than
    ``keep_recent_tokens`` are kept, as long as the tail stays within ``tail_budget``. The
    tail never begins with a tool result: a call and its results stay together."""
    if not items:
        return 0
    start = len(items) - 1
    while start > 0 and items[start].role == "tool":
        start -= 1
    kept = sum(message_tokens(m) for m in items[start:])
    count = len(items) - start
    position = start
    while position > 0 and (count < protect_last_n or kept < keep_recent_tokens):
        candidate = position - 1
        while candidate > 0 and items[candidate].role == "tool":
            candidate -= 1  # a round goes whole, with its assistant message
        cost = sum(message_tokens(m) for m in items[candidate:position])
        if kept + cost > tail_budget:
            break
        kept += cost
        count += position - candidate
        position = candidate
    return position


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def side_effects(head: Sequence[ChatMessage], read_only: Callable[[str], bool]) -> list[Action]:
    """Each call in ``head`` that may have changed the world, with the head of its output."""
    actions: list[Action] = []
    calls: dict[str, tuple[str, str]] = {}
    for message in head:
        if message.role == "assistant":
            calls = {call.id: (call.name, call.arguments) for call in message.tool_calls}
        elif message.role == "tool":
            name, arguments = calls.get(message.tool_call_id or "", (message.name or "?", ""))
            if not read_only(name):
                actions.append(
                    Action(
                        name,
                        _one_line(arguments, ACTION_ARGUMENT_CHARS),
                        _one_line(message.content, ACTION_OUTPUT_CHARS) or "(no output)",
                    )
                )
    return actions


SUMMARY_OPENING = (
    "[The earlier part of this conversation was compacted to save room: {count} messages are "
    "summarized below. The full transcript is kept; search it when a detail is missing.]"
)


def summary_message(record: CompactionRecord) -> ChatMessage:
    """The view's stand-in for the messages ``record`` replaces."""
    parts = [
        SUMMARY_OPENING.format(count=record.messages_replaced),
        f"<summary>\n{record.summary.strip()}\n</summary>",
    ]
    if record.actions:
        lines = [
            "Actions already taken (their effects are real: do not repeat them unless the user "
            "asks; the output shown is the head of what each call returned):"
        ]
        if record.actions_left_out:
            lines.append(f"- ({record.actions_left_out} earlier ones: see the summary)")
        lines += [_action_line(action) for action in record.actions]
        parts.append("\n".join(lines))
    return ChatMessage("user", "\n\n".join(parts))


def _action_line(action: Action) -> str:
    return f"- {action.tool}({action.arguments}) -> {action.output}"


def newest_actions(actions: Sequence[Action], budget_chars: int) -> tuple[tuple[Action, ...], int]:
    """The newest ``actions`` whose lines fit ``budget_chars``, and how many older ones
    did not fit."""
    kept: list[Action] = []
    used = 0
    for action in reversed(actions):
        used += len(_action_line(action)) + 1
        if used > budget_chars and kept:
            break
        kept.append(action)
    return tuple(reversed(kept)), len(actions) - len(kept)


@dataclass
class Outcome:
    """What a compaction did; ``record`` is None when nothing was kept."""

    record: CompactionRecord | None
    view: list[ChatMessage] = field(default_factory=list)
    """The compacted view without the system prompt (the summary first), when kept."""
    seqs: list[int | None] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    why_not: str | None = None
    usages: list[Usage] = field(default_factory=list)


def _why_not_kept(reason: str, before: int, after: int, goal_tokens: int | None) -> str | None:
    """Anti-thrash: a compaction that would not shrink the view enough is not kept."""
    if reason == "manual":
        return "the summary is no shorter than what it replaces" if after >= before else None
    if after > before * (1 - MIN_SAVING):
        return f"it would save too little (about {before:,} -> {after:,} tokens)"
    if goal_tokens is not None and after > goal_tokens:
        return f"what must be kept is too big on its own (about {after:,} tokens)"
    return None


EngineResolver = Callable[[], tuple[ContextEngine | None, str | None]]
"""The configured context engine, built on first use, and a warning when it cannot be."""


class Compactor:
    """One per turn engine: its settings, windows, summary model and context engine."""

    def __init__(
        self,
        settings: CompressionSettings,
        summary_model: SummaryModel,
        resolve_engine: EngineResolver,
        read_only: Callable[[str], bool],
    ) -> None:
        self.settings = settings
        self.summary_model = summary_model
        self.resolve_engine = resolve_engine
        self.read_only = read_only
        self._windows: dict[tuple[str, str], Window] = {}

    # --- the window -------------------------------------------------------------------------

    async def window(self, route: ModelRoute) -> Window:
        key = (route.name, route.model)
        known = self._windows.get(key)
        if known is not None:
            return known
        configured = configured_window(self.settings.config, route.name)
        if configured is not None:
            found = Window(configured, "config")
        else:
            reported = await self._reported(route)
            if reported is not None:
                found = Window(reported, "provider")
            else:
                found = Window(DEFAULT_WINDOW, "default")
        self._windows[key] = found
        return found

    @staticmethod
    async def _reported(route: ModelRoute) -> int | None:
        provider = route.provider
        if not isinstance(provider, WindowReporter):
            return None
        try:
            async with asyncio.timeout(5):
                reported = await provider.context_window(route.model)
        except Exception as exc:  # noqa: BLE001 - a provider that cannot say is not asked again
            log.debug("%s could not report its window: %s", route.name, exc)
            return None
        return reported if isinstance(reported, int) and reported > 0 else None

    def learn(self, route: ModelRoute, error: ProviderError, tokens_sent: int) -> Window:
        """After an overflow: the window the error states, or less than what was sent."""
        current = self._windows.get((route.name, route.model))
        stated = error.stated_window  # what the provider read from its service's answer
        guess = stated if isinstance(stated, int) and stated >= 256 else int(tokens_sent * 0.9)
        if current is not None and current.tokens <= guess:
            return current
        learnt = Window(max(guess, 256), "error")
        self._windows[(route.name, route.model)] = learnt
        return learnt

    # --- a compaction ----------------------------------------------------------------------

    async def compact(
        self,
        *,
        session_id: str,
        items: Sequence[ChatMessage],
        seqs: Sequence[int | None],
        previous: CompactionRecord | None,
        fixed_tokens: int,
        window: int,
        route: ModelRoute,
        reason: str,
        focus: str | None = None,
        goal_tokens: int | None = None,
    ) -> Outcome:
        """Compact the view ``items`` (stored messages after the earlier summary, with their
        seqs) and say whether it is worth keeping. ``fixed_tokens`` is what the system
        prompt and tool schemas take; ``goal_tokens`` is what an automatic compaction must
        bring the request under. Nothing is saved here: the caller commits ``record``."""
        settings = self.settings
        previous_view = [summary_message(previous)] if previous is not None else []
        before = fixed_tokens + sum(message_tokens(m) for m in [*previous_view, *items])
        summary_tokens = max(256, min(4000, window // 20))
        budget = max(0, int((goal_tokens or window) * 0.6) - fixed_tokens - summary_tokens)
        manual = reason == "manual"
        # /compact keeps the last exchange only: the user asked for room now.
        split = split_point(
            items,
            2 if manual else settings.protect_last_n,
            0 if manual else settings.keep_recent_tokens,
            budget,
        )
        head, tail = list(items[:split]), list(items[split:])
        if not head:
            return Outcome(
                None, why_not="nothing to compact: every message is within the part always kept"
            )
        # Even the smallest summary could not make this worth it: no model call is spent.
        floor = fixed_tokens + sum(message_tokens(m) for m in tail)
        hopeless = _why_not_kept(reason, before, floor, goal_tokens)
        if hopeless is not None:
            return Outcome(None, why_not=hopeless)
        boundary = next((seq for seq in reversed(seqs[:split]) if seq is not None), None)
        if boundary is None:
            raise ValueError("compaction needs the stored messages' seqs")
        notices: list[str] = []
        usages: list[Usage] = []
        compaction, engine_name = await self._summary(
            session_id,
            head,
            tail,
            previous,
            focus,
            summary_tokens,
            window,
            route,
            reason,
            usages,
            notices,
        )
        earlier = previous.actions if previous is not None else ()
        every_action = (*earlier, *side_effects(head, self.read_only))
        # The list gets as much room as the summary: it must not undo the compaction.
        actions, left_out = newest_actions(every_action, summary_tokens * 4)
        left_out += previous.actions_left_out if previous else 0
        replaced = len(head) + (previous.messages_replaced if previous else 0)
        record = CompactionRecord(
            session_id=session_id,
            boundary_seq=boundary,
            summary=compaction.summary,
            reason=reason,
            engine=engine_name,
            by_model=compaction.by_model,
            messages_replaced=replaced,
            tokens_before=before,
            tokens_after=0,
            actions=actions,
            actions_left_out=left_out,
        )
        stand_in = summary_message(record)
        after = fixed_tokens + message_tokens(stand_in) + sum(message_tokens(m) for m in tail)
        record = replace(record, tokens_after=after)
        view, view_seqs = [stand_in, *tail], [None, *seqs[split:]]
        outcome = Outcome(record, view, view_seqs, notices, usages=usages)
        why_not = _why_not_kept(reason, before, after, goal_tokens)
        if why_not is not None:
            outcome.record, outcome.why_not = None, why_not
        return outcome

    async def _summary(
        self,
        session_id: str,
        head: list[ChatMessage],
        tail: list[ChatMessage],
        previous: CompactionRecord | None,
        focus: str | None,
        summary_tokens: int,
        window: int,
        route: ModelRoute,
        reason: str,
        usages: list[Usage],
        notices: list[str],
    ) -> tuple[Compaction, str]:
        def fallback() -> str:
            return plain_summary(
                head,
                previous_summary=previous.summary if previous else None,
                read_only_tools=self._read_only_names(head),
                budget_chars=summary_tokens * 4,
                focus=focus,
            )

        engine, warning = self.resolve_engine()
        if warning:
            notices.append(warning)
        if engine is None:
            return Compaction(fallback(), by_model=False), "plain"
        request = CompactionRequest(
            session_id=session_id,
            reason=reason,
            head=head,
            tail=tail,
            previous_summary=previous.summary if previous else None,
            focus=focus,
            summary_tokens=summary_tokens,
            input_tokens=max(2000, int(window * 0.6)),
            read_only_tools=self._read_only_names(head),
            summarize=self.summary_model.summarizer(route, usages),
            count_tokens=estimate_tokens,
        )
        name = self.settings.engine
        try:
            compaction = await engine.compact(request)
        except Exception as exc:  # noqa: BLE001 - an engine that fails loses nothing
            notices.append(
                f"context engine {name!r} failed ({_one_line(str(exc), 200)}); "
                "wrote a summary without it"
            )
            return Compaction(fallback(), by_model=False), "plain"
        if not isinstance(compaction, Compaction) or not compaction.summary.strip():
            notices.append(f"context engine {name!r} returned no summary; wrote one without it")
            return Compaction(fallback(), by_model=False), "plain"
        if compaction.notice:
            notices.append(compaction.notice)
        return compaction, name

    def _read_only_names(self, head: Sequence[ChatMessage]) -> frozenset[str]:
        names = {call.name for m in head for call in m.tool_calls}
        return frozenset(name for name in names if self.read_only(name))
