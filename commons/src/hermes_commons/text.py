"""Short plain-text views every front-end and the ``hermes`` command share: a tool call in
one line, a result preview, durations and dates, token usage and cost. Text from a model, a
tool or a file is made printable first: it must not drive the terminal."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "Totals",
    "argument_preview",
    "describe_cost",
    "one_line",
    "printable",
    "result_preview",
    "seconds",
    "when",
]

# The argument a tool's line shows first: the one that says what it does.
_MAIN_ARGUMENTS = ("command", "path", "query", "pattern", "url", "name", "text")


# Control characters other than newline and tab: output from a model, a tool or a file must
# not drive the terminal (clear the screen, set the title, write the clipboard).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with terminal control characters made visible (ESC shows as ␛)."""
    return _CONTROL.sub(lambda m: "\u241b" if m.group() == "\x1b" else "\ufffd", text)


def one_line(text: str, width: int) -> str:
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def argument_preview(arguments: Mapping[str, Any], width: int = 60) -> str:
    """``ls -la`` for ``{"command": "ls -la"}``; otherwise compact JSON, cut to ``width``."""
    for key in _MAIN_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return one_line(value, width)
    if not arguments:
        return ""
    return one_line(json.dumps(dict(arguments), ensure_ascii=False, default=str), width)


def result_preview(content: str, width: int = 100) -> str:
    """A tool's result in one line of at most ``width`` characters, except a refusal
    (``refused: ...``), which is shown whole: its end says what would allow it."""
    if not content.strip():
        return "(no output)"
    if content.startswith("refused"):
        return " ".join(printable(content).split())
    return one_line(content, width)


def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


class _Counted(Protocol):
    """A session as stored or as listed (``SessionSummary``): what its totals are made of."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_read_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...
    @property
    def reasoning_tokens(self) -> int: ...
    @property
    def estimated_cost_usd(self) -> float: ...
    @property
    def unpriced_calls(self) -> int: ...


@dataclass(frozen=True)
class Totals:
    """Token and cost totals of a session, or of the part of it one turn added."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @classmethod
    def of(cls, session: _Counted | None) -> Totals:
        if session is None:
            return cls()
        return cls(
            session.input_tokens,
            session.output_tokens,
            session.cache_read_tokens,
            session.cache_write_tokens,
            session.reasoning_tokens,
            session.estimated_cost_usd,
            session.unpriced_calls,
        )

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            round(self.cost_usd + other.cost_usd, 8),
            self.unpriced_calls + other.unpriced_calls,
        )

    def __sub__(self, other: Totals) -> Totals:
        return Totals(
            self.input_tokens - other.input_tokens,
            self.output_tokens - other.output_tokens,
            self.cache_read_tokens - other.cache_read_tokens,
            self.cache_write_tokens - other.cache_write_tokens,
            self.reasoning_tokens - other.reasoning_tokens,
            round(self.cost_usd - other.cost_usd, 8),
            self.unpriced_calls - other.unpriced_calls,
        )

    def cost_text(self) -> str:
        """Unknown prices are never shown as free."""
        return describe_cost(self.cost_usd, self.unpriced_calls)

    def as_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": None if self.unpriced_calls and not self.cost_usd else self.cost_usd,
            "unpriced_calls": self.unpriced_calls,
        }

    def line(self) -> str:
        text = f"{self.input_tokens:,} in, {self.output_tokens:,} out"
        if self.cache_read_tokens or self.cache_write_tokens:
            text += (
                f" ({self.cache_read_tokens:,} cache read, {self.cache_write_tokens:,} cache write)"
            )
        if self.reasoning_tokens:
            text += f", {self.reasoning_tokens:,} reasoning"
        return f"{text}; cost {self.cost_text()}"


def when(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def describe_cost(cost_usd: float, unpriced_calls: int, calls: int | None = None) -> str:
    """``$0.0123``; ``unknown`` when no call was priced; both parts when some were."""
    if unpriced_calls and (calls is None or unpriced_calls >= calls) and cost_usd == 0:
        return "unknown"
    text = f"${cost_usd:.4f}"
    if unpriced_calls:
        text += f" + unknown ({unpriced_calls} call{'s' if unpriced_calls != 1 else ''} unpriced)"
    return text
