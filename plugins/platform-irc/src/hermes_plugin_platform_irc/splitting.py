"""A reply as IRC lines: one per line of the reply, long ones cut at a space, each within the
bytes the server relays, never inside a UTF-8 character or a grapheme (an emoji with its
modifiers, a letter with its accents).

The server relays our line to others with our full source in front
(``:nick!user@host PRIVMSG #chan :text``) and cuts what passes 512 bytes, so the room left
for text depends on the source the server gave us and the target."""

from __future__ import annotations

import re
import unicodedata

from hermes_plugin_platform_irc.wire import LINE_BYTES

__all__ = ["clean", "room_for_text", "to_lines"]

_FENCE = re.compile(r"^\s*(```|~~~)")
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""C0 controls but tab: a model's \\x01 would make a CTCP request, a CR a line of its own."""


def clean(text: str) -> str:
    return _CONTROLS.sub("", text)


def room_for_text(source: str, target: str) -> int:
    """Bytes left for text in ``:SOURCE PRIVMSG TARGET :TEXT\r\n``."""
    overhead = len(f":{source} PRIVMSG {target} :\r\n".encode())
    return LINE_BYTES - overhead


def _cut(text: str, room: int) -> int:
    """How many characters of ``text`` fit in ``room`` bytes: up to a space in the last
    three quarters if there is one, else up to the last whole grapheme (Unicode's extended
    grapheme clusters, as the regex library finds them); a single grapheme larger than the
    room is cut between characters."""
    import regex  # here: the gateway imports every installed platform, configured or not

    used = 0
    fits = 0
    for cluster in regex.finditer(r"\X", text):
        size = len(cluster.group().encode())
        if used + size > room:
            break
        used += size
        fits = cluster.end()
    if fits >= len(text):
        return fits
    space = text.rfind(" ", 0, fits + 1)
    following = text[space + 1 : space + 2]
    # A space a combining mark sits on is part of a grapheme: not a place to cut.
    if space > fits // 4 and not (following and unicodedata.combining(following)):
        return space
    if fits == 0:  # one grapheme past the room: whole characters, then
        while fits < len(text) and used + len(text[fits].encode()) <= room:
            used += len(text[fits].encode())
            fits += 1
    return max(fits, 1)


def to_lines(text: str, room: int, first_prefix: str = "") -> list[str]:
    """``text`` (Markdown as the model wrote it) as IRC lines of at most ``room`` bytes:
    empty lines and code fences left out, the rest as written; ``first_prefix``
    (``alice: ``) starts the first line."""
    if room < 16:
        raise ValueError("an IRC line must have room for at least 16 bytes of text")
    lines: list[str] = []
    prefix = first_prefix
    for raw in clean_lines(text):
        rest = prefix + raw
        prefix = ""
        while rest:
            at = _cut(rest, room)
            piece = rest[:at].rstrip()
            if piece:
                lines.append(piece)
            rest = rest[at:].lstrip(" ")
    if prefix and not lines:
        lines.append(prefix.rstrip())
    return lines


def clean_lines(text: str) -> list[str]:
    out = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(raw):
            continue
        line = clean(raw.replace("\t", "    ")).rstrip()
        if line.strip():
            out.append(line)
    return out
