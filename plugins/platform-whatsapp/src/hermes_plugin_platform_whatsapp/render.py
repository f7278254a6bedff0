"""Markdown as WhatsApp shows it: ``*bold*``, ``_italic_``, ``~strike~``, ``` ``` ``` for
code; headings in bold, links as "text (address)". WhatsApp shows everything else as it is
written (no HTML, nothing to escape), and code stays untouched."""

from __future__ import annotations

import re

__all__ = ["to_whatsapp"]

_FENCE = re.compile(r"(```.*?```|`[^`\n]+`)", re.DOTALL)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def _prose(text: str) -> str:
    text = _HEADING.sub(lambda m: f"\x00{m.group(1)}\x00", text)
    text = _ITALIC.sub(lambda m: f"_{m.group(1)}_", text)
    text = _BOLD.sub(lambda m: f"\x00{m.group(1) or m.group(2)}\x00", text)
    text = _STRIKE.sub(lambda m: f"~{m.group(1)}~", text)
    text = _LINK.sub(
        lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} ({m.group(2)})", text
    )
    return text.replace("\x00", "*")


def to_whatsapp(markdown: str) -> str:
    parts = _FENCE.split(markdown)
    return "".join(part if index % 2 else _prose(part) for index, part in enumerate(parts))
