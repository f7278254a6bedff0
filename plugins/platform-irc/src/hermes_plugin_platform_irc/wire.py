"""IRC's wire format: one message per line, as RFC 1459 wrote it and IRCv3 extended it
(message tags), parsed and written; nick comparison by the server's case mapping.

Written here rather than taken from a library: the maintained asyncio client (pydle) splits
replies by characters, so a line of Chinese passes the 512-byte limit and the server cuts
or refuses it; it verifies no TLS certificate unless asked, has no STARTTLS and no
penalty-aware sending, and stops reconnecting after three tries. What it would leave us is
this parser, forty lines."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["LINE_BYTES", "Line", "casefold", "format_line", "parse_line"]

LINE_BYTES = 512
"""The longest line a server takes, CR LF included (RFC 1459 2.3; tags not counted)."""

_TAG_UNESCAPES = {":": ";", "s": " ", "\\": "\\", "r": "\r", "n": "\n"}


@dataclass(frozen=True, slots=True)
class Line:
    command: str
    """Upper case (``PRIVMSG``) or a three-digit reply (``001``)."""
    params: tuple[str, ...] = ()
    source: str = ""
    """``nick!user@host`` or a server's name; empty for the client's own lines."""
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def nick(self) -> str:
        return self.source.split("!", 1)[0]

    def param(self, index: int) -> str:
        return self.params[index] if index < len(self.params) else ""


def _unescape(value: str) -> str:
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(_TAG_UNESCAPES.get(following, following))
        else:
            out.append(char)
    return "".join(out)


def parse_line(raw: str) -> Line | None:
    """One line as the server sent it (without CR LF); None for an empty one."""
    rest = raw.rstrip("\r\n")
    tags: dict[str, str] = {}
    if rest.startswith("@"):
        block, _, rest = rest[1:].partition(" ")
        for item in block.split(";"):
            if item:
                key, _, value = item.partition("=")
                tags[key] = _unescape(value)
        rest = rest.lstrip(" ")
    source = ""
    if rest.startswith(":"):
        source, _, rest = rest[1:].partition(" ")
        rest = rest.lstrip(" ")
    trailing: str | None = None
    if " :" in rest:
        rest, _, trailing = rest.partition(" :")
    elif rest.startswith(":"):
        rest, trailing = "", rest[1:]
    words = rest.split()
    if not words:
        return None
    params = words[1:] + ([trailing] if trailing is not None else [])
    return Line(command=words[0].upper(), params=tuple(params), source=source, tags=tags)


def format_line(command: str, *params: str) -> bytes:
    """A line to send, CR LF ended. The last parameter is sent as trailing (it may hold
    spaces); none may hold a line break, which would start a command of its own."""
    for param in params:  # never quoted: a parameter may be a password
        if "\r" in param or "\n" in param or "\0" in param:
            raise ValueError("an IRC parameter cannot hold a line break or NUL")
    for param in params[:-1]:
        if not param or " " in param or param.startswith(":"):
            raise ValueError("only an IRC command's last parameter may hold spaces")
    words = [command, *params[:-1]]
    if params:
        last = params[-1]
        words.append(f":{last}" if (not last or " " in last or last.startswith(":")) else last)
    return (" ".join(words) + "\r\n").encode("utf-8")


_RFC1459 = str.maketrans("[]\\^", "{}|~")


def casefold(name: str, mapping: str = "rfc1459") -> str:
    """A nick or channel as the server compares them: ``ascii`` folds A-Z only;
    ``rfc1459`` (the default) also takes ``{}|~`` as the lower case of ``[]\\^``."""
    lowered = "".join(c.lower() if "A" <= c <= "Z" else c for c in name)
    if mapping == "ascii":
        return lowered
    return lowered.translate(_RFC1459)
