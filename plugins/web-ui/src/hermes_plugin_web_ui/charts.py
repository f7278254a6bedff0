"""Usage as charts: inline SVG drawn on the server, so the status page needs no script and
no chart library."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from hermes_sdk.dashboard import Bars
from hermes_sdk.runtime import UsageByDay

__all__ = ["Bar", "bar_chart", "by_day", "by_model", "row_chart"]

_HEIGHT = 140
_BAR_GAP = 2


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    tokens: int
    cost_usd: float
    calls: int
    unpriced_calls: int

    def title(self) -> str:
        cost = f"${self.cost_usd:.4f}" + (" or more" if self.unpriced_calls else "")
        return f"{self.label}: {self.tokens:,} tokens, {cost}, {self.calls} model calls"


def by_day(rows: Sequence[UsageByDay], days: int) -> list[Bar]:
    """One bar per day of the last ``days`` (empty days too, so the axis is time)."""
    totals: dict[str, list[float]] = {}
    for row in rows:
        entry = totals.setdefault(row.day, [0, 0.0, 0, 0])
        entry[0] += row.input_tokens + row.output_tokens
        entry[1] += row.cost_usd
        entry[2] += row.model_calls
        entry[3] += row.unpriced_calls
    today = time.time()
    bars = []
    for back in range(days - 1, -1, -1):
        day = time.strftime("%Y-%m-%d", time.localtime(today - back * 86400))
        tokens, cost, calls, unpriced = totals.get(day, [0, 0.0, 0, 0])
        bars.append(Bar(day, int(tokens), float(cost), int(calls), int(unpriced)))
    return bars


def by_model(rows: Sequence[UsageByDay]) -> list[Bar]:
    """One bar per provider / model, the largest first."""
    totals: dict[str, list[float]] = {}
    for row in rows:
        label = f"{row.provider or '?'} / {row.model or '?'}"
        entry = totals.setdefault(label, [0, 0.0, 0, 0])
        entry[0] += row.input_tokens + row.output_tokens
        entry[1] += row.cost_usd
        entry[2] += row.model_calls
        entry[3] += row.unpriced_calls
    bars = [Bar(label, int(t), float(c), int(n), int(u)) for label, (t, c, n, u) in totals.items()]
    return sorted(bars, key=lambda bar: bar.tokens, reverse=True)


def bar_chart(bars: Sequence[Bar], *, label: str) -> Markup:
    """Vertical bars of tokens, one per entry, each titled with its figures (hover)."""
    width = max(len(bars), 1) * 14
    top = max((bar.tokens for bar in bars), default=0) or 1
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {_HEIGHT}" role="img" '
        f'aria-label="{escape(label)}" preserveAspectRatio="none">'
    ]
    for index, bar in enumerate(bars):
        height = round(_HEIGHT * bar.tokens / top, 1)
        x = index * 14
        parts.append(
            f'<rect x="{x + _BAR_GAP / 2}" y="{_HEIGHT - height}" width="{14 - _BAR_GAP}" '
            f'height="{height}"><title>{escape(bar.title())}</title></rect>'
        )
    parts.append("</svg>")
    # The axis is HTML below the chart: text inside a stretched SVG would be stretched too.
    first, last = (bars[0].label, bars[-1].label) if bars else ("", "")
    parts.append(f'<div class="axis"><span>{escape(first)}</span><span>{escape(last)}</span></div>')
    return Markup("".join(parts))


def row_chart(bars: Sequence[Bar]) -> Markup:
    """One row per entry (models): its label and figures as text, its bar an SVG stretched
    to the row's width (the pages' Content-Security-Policy allows no inline style, and text
    inside a scaled SVG would shrink with it on a phone)."""
    if not bars:
        return Markup('<p class="hint">no model calls in these days</p>')
    top = max(bar.tokens for bar in bars) or 1
    parts = ['<ul class="rows" aria-label="tokens by model">']
    for bar in bars:
        length = round(100 * bar.tokens / top, 1)
        cost = f"${bar.cost_usd:.4f}" + ("+" if bar.unpriced_calls else "")
        parts.append(
            f'<li><span class="label">{escape(bar.label)}</span>'
            '<svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
            f'<rect width="{length}" height="10"><title>{escape(bar.title())}</title></rect>'
            f'</svg><span class="figure">{bar.tokens:,} tok · {cost}</span></li>'
        )
    parts.append("</ul>")
    return Markup("".join(parts))


def panel_bars(block: Bars) -> Markup:
    """A panel's :class:`~hermes_sdk.dashboard.Bars`: one row per bar, as the models chart."""
    if not block.bars:
        return Markup('<p class="hint">nothing to show yet</p>')
    top = max(bar.value for bar in block.bars) or 1
    parts = [f'<ul class="rows" aria-label="{escape(block.title)}">']
    for bar in block.bars:
        length = round(100 * max(bar.value, 0) / top, 1)
        parts.append(
            f'<li><span class="label">{escape(bar.label)}</span>'
            f'<svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
            f'<rect width="{length}" height="10"></rect></svg>'
            f'<span class="figure">{escape(bar.text)}</span></li>'
        )
    parts.append("</ul>")
    return Markup("".join(parts))
