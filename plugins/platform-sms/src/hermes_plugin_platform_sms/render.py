"""Markdown as a text message: plain words (no markup survives SMS), links as their address,
and typography that would force the whole message into UCS-2 (70 characters a segment
instead of 160: curly quotes, long dashes, ellipses) swapped for its GSM-7 look-alike."""

from __future__ import annotations

import re

__all__ = ["to_sms"]

_SWAPS = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2026": "...",
        "\u00a0": " ",
        "\u2022": "-",
        "\u2011": "-",
        "\u2212": "-",
        "\u2009": " ",
        "\u202f": " ",
        "\u2192": "->",
        "\u00ab": '"',
        "\u00bb": '"',
        "\u26a0": "!",
        "\ufe0f": "",
        "\u21bb": "",
    }
)
_FENCE = re.compile(r"^```[^\n]*\n?|^```\s*$", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![*\w])([*_])(?=\S)([^*_\n]+?)(?<=\S)\1(?![*\w])")
_HEADING = re.compile(r"^#{1,6}\s+", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")


def to_sms(markdown: str) -> str:
    text = _FENCE.sub("", markdown)
    text = _LINK.sub(
        lambda m: m.group(2) if m.group(1) == m.group(2) else f"{m.group(1)}: {m.group(2)}", text
    )
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _ITALIC.sub(lambda m: m.group(2), text)
    text = _HEADING.sub("", text)
    text = _CODE.sub(lambda m: m.group(1), text)
    return text.translate(_SWAPS)
