"""A reply cut to a platform's limit in bytes (WeCom takes 2,048 bytes of UTF-8 a message),
where a limit in characters would be wrong for every script but Latin: a Chinese character
is three bytes, an emoji four. Cut at a paragraph, a line, a sentence's end (in Chinese
and Japanese punctuation too) or a space where there is one; never inside a character, nor
between a letter and its accents, an emoji and its modifiers, or the halves of a flag."""

from __future__ import annotations

import unicodedata

__all__ = ["split_utf8"]

_BREAKS = (
    "\n\n",
    "\n",
    "\u3002",
    "\uff01",
    "\uff1f",
    "\uff1b",
    ". ",
    "! ",
    "? ",
    "\uff0c",
    ", ",
    " ",
)
"""Where to cut, best first: paragraphs, lines, sentence ends (the full-width full stop,
exclamation and question marks and semicolon Chinese and Japanese write, then Latin ones),
clauses (the full-width comma, then ours), words."""
_JOINING = {0x200D, 0xFE0E, 0xFE0F, 0x20E3}
"""Zero-width joiner, variation selectors and the keycap: they belong to what precedes."""


def _joins_previous(text: str, at: int) -> bool:
    """Whether a cut before ``text[at]`` would split a grapheme."""
    if at <= 0 or at >= len(text):
        return False
    here, before = ord(text[at]), ord(text[at - 1])
    if unicodedata.combining(text[at]) or here in _JOINING or before == 0x200D:
        return True
    if 0x1F3FB <= here <= 0x1F3FF or 0xE0020 <= here <= 0xE007F:  # skin tones, tag letters
        return True
    if 0x1160 <= here <= 0x11FF or here == 0x0E33:  # Hangul jamo's vowels and finals; Thai
        return True
    if 0x1F1E6 <= here <= 0x1F1FF and 0x1F1E6 <= before <= 0x1F1FF:  # a flag's halves
        pairs = 0
        index = at - 1
        while index >= 0 and 0x1F1E6 <= ord(text[index]) <= 0x1F1FF:
            pairs += 1
            index -= 1
        return pairs % 2 == 1
    return unicodedata.category(text[at]) in ("Mn", "Mc", "Me")  # marks, spacing ones too


def _fits(text: str, max_bytes: int) -> int:
    """How many characters of ``text`` fit in ``max_bytes``, ending on a grapheme's end."""
    used = 0
    count = 0
    for char in text:
        size = len(char.encode())
        if used + size > max_bytes:
            break
        used += size
        count += 1
    end = count
    while 0 < end < len(text) and _joins_previous(text, end):
        end -= 1
    return end or count  # one grapheme larger than the limit: cut between its characters


def split_utf8(text: str, max_bytes: int) -> list[str]:
    """``text`` in pieces of at most ``max_bytes`` bytes of UTF-8, in order; joined they
    give ``text`` back but for the line breaks and spaces cut at. (Fenced code is cut as
    text: for a platform that shows Markdown, :func:`hermes_sdk.platform.split_message`.)"""
    if max_bytes < 16:
        raise ValueError("max_bytes must be at least 16")
    pieces: list[str] = []
    rest = text.replace("\r\n", "\n").strip("\n").rstrip()
    while rest:
        if len(rest.encode()) <= max_bytes:
            pieces.append(rest)
            break
        fits = _fits(rest, max_bytes)
        cut = fits
        for separator in _BREAKS:
            at = rest.rfind(separator, 0, fits - len(separator) + 1)
            if at > fits // 4:
                cut = at + len(separator)
                break
        # The separator stays with the piece before it; a line's indent stays with its line.
        piece, rest = rest[:cut].rstrip(), rest[cut:].lstrip("\n")
        if piece.strip():
            pieces.append(piece)
    return [piece for piece in pieces if piece.strip()]
