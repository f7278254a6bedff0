"""HERMES_HOME/.env: ``KEY=VALUE`` lines holding secrets, read strictly and written so that
they read back as they were. The kernel and every plugin read it with these functions, so
a value means the same to all of them.

The rules, those of shells and python-dotenv: blank lines and ``#`` lines are skipped, an
``export`` in front is allowed, a value in double quotes knows ``\\n \\t \\r \\" \\\\``, one in
single quotes is taken as it is, and an unquoted one ends at `` #`` (a comment). A line
that is not ``KEY=VALUE``, or a quote left open, is an error naming the file and line:
guessing would hand a half-read secret to a provider. Values are only returned, never put
into ``os.environ``, so they do not leak into the subprocesses tools start.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from hermes_commons.files import atomic_write_text

__all__ = [
    "DotenvError",
    "current_secret",
    "parse_dotenv",
    "quote_dotenv_value",
    "read_dotenv",
    "set_dotenv_value",
    "set_dotenv_values",
]

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


class DotenvError(ValueError):
    """A .env file that cannot be read or parsed; ``problems`` holds one line each (file,
    line number and the fix), and the message is those lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _closing(value: str, quote: str) -> int:
    """Where the quote opened at 0 closes, or -1. In double quotes a backslash escapes the
    next character, so ``"a\\\\"`` (a value ending in a backslash) closes at its last quote."""
    at = 1
    while at < len(value):
        if value[at] == "\\" and quote == '"':
            at += 2
            continue
        if value[at] == quote:
            return at
        at += 1
    return -1


def _unquote(raw: str, where: str) -> str:
    value = raw.strip()
    if value[:1] in {'"', "'"}:
        quote = value[0]
        end = _closing(value, quote)
        if end < 0:
            raise DotenvError([f"{where}: unterminated {quote} quote; close it on the same line"])
        inner = value[1:end]
        if quote == '"':
            inner = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), inner)
        return inner
    # Unquoted: a ' #' starts a comment, as in shells and python-dotenv.
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def parse_dotenv(path: Path | str, text: str) -> dict[str, str]:
    """Parse ``text`` as the .env file ``path`` (named in errors); raises DotenvError
    naming the line of each bad entry. A key set twice: the later line wins."""
    values: dict[str, str] = {}
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export ") :].lstrip()
        key, sep, raw = stripped.partition("=")
        key = key.strip()
        where = f"{path}:{number}"
        if not sep or not _KEY.fullmatch(key):
            problems.append(f"{where}: expected KEY=VALUE with KEY made of letters, digits and _")
            continue
        try:
            values[key] = _unquote(raw, where)
        except DotenvError as exc:
            problems.extend(exc.problems)
    if problems:
        raise DotenvError(problems)
    return values


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise DotenvError([f"{path}: cannot read: {exc}"]) from None


def read_dotenv(path: Path | str) -> dict[str, str]:
    """The values in ``path``; a missing file holds none. Raises DotenvError."""
    path = Path(path)
    text = _read(path)
    return {} if text is None else parse_dotenv(path, text)


def current_secret(dotenv: Path | str, name: str) -> str | None:
    """``name`` as it is now: the environment, then the .env at ``dotenv`` read again (a key
    that was rejected may have been replaced since); None when neither has it or the file
    cannot be read."""
    import os

    if os.environ.get(name):
        return os.environ[name]
    try:
        return read_dotenv(dotenv).get(name)
    except DotenvError:
        return None


def quote_dotenv_value(value: str) -> str:
    """``value`` in double quotes with backslash escapes: read back as it was, whatever it
    holds (spaces, quotes, ``#``, newlines)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def set_dotenv_values(path: Path | str, values: Mapping[str, str]) -> None:
    """Set each key of ``values`` in the .env at ``path``: its line is replaced where it is
    set, new ones are added at the end, every other line and comment is kept. Written
    atomically with mode 0600. Raises DotenvError for a bad key, or when the file cannot be
    read or parsed: it is never overwritten as if it were empty."""
    path = Path(path)
    if not values:
        return
    bad = [key for key in values if not _KEY.fullmatch(key)]
    if bad:
        raise DotenvError([f"{key!r} is not a variable name" for key in bad])
    text = _read(path) or ""
    parse_dotenv(path, text)  # refuse to rewrite a file we could not read back
    lines: list[str] = []
    written: set[str] = set()
    for existing in text.splitlines():
        name = existing.strip().removeprefix("export ").partition("=")[0].strip()
        if name not in values:
            lines.append(existing)
        elif name not in written:  # the first place it was set; later duplicates would win
            lines.append(f"{name}={quote_dotenv_value(values[name])}")
            written.add(name)
    lines += [f"{key}={quote_dotenv_value(v)}" for key, v in values.items() if key not in written]
    atomic_write_text(path, "\n".join(lines) + "\n", mode=0o600)


def set_dotenv_value(path: Path | str, key: str, value: str) -> None:
    """:func:`set_dotenv_values` for one key."""
    set_dotenv_values(path, {key: value})
