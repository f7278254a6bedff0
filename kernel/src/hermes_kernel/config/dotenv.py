"""Parse HERMES_HOME/.env: ``KEY=VALUE`` lines holding secrets, nothing else.

The values are kept in memory only; they are never copied into ``os.environ``, so they do not
leak into subprocesses that tools start.
"""

from __future__ import annotations

import re
from pathlib import Path

from hermes_kernel.config.errors import ConfigError

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unquote(raw: str, where: str) -> str:
    value = raw.strip()
    if value[:1] in {'"', "'"}:
        quote = value[0]
        end = value.find(quote, 1)
        while quote == '"' and end > 0 and value[end - 1] == "\\":
            end = value.find(quote, end + 1)
        if end < 0:
            raise ConfigError([f"{where}: unterminated {quote} quote; close it on the same line"])
        inner = value[1:end]
        if quote == '"':
            inner = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), inner)
        return inner
    # Unquoted: a ' #' starts a comment, as in shells and python-dotenv.
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def parse_dotenv(path: Path, text: str) -> dict[str, str]:
    """Parse ``text`` as a .env file; raise ConfigError naming the line of each bad entry."""
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
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError(problems)
    return values


def read_dotenv(path: Path) -> dict[str, str]:
    """Read ``path``; a missing file holds no secrets."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot read: {exc}"]) from None
    return parse_dotenv(path, text)


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def set_dotenv_value(path: Path, key: str, value: str) -> None:
    """Set ``key`` in the .env at ``path`` (replacing its line, keeping every other line and
    comment), written atomically with mode 0600. Raises ConfigError if the file is
    unreadable or malformed: it is never overwritten as if empty."""
    from hermes_kernel.files import atomic_write_text

    if not _KEY.fullmatch(key):
        raise ConfigError([f"{key!r} is not a variable name"])
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot read: {exc}"]) from None
    parse_dotenv(path, text)  # refuse to rewrite a file we could not read back
    line = f"{key}={_quoted(value)}"
    lines: list[str] = []
    replaced = False
    for existing in text.splitlines():
        name = existing.strip().removeprefix("export ").partition("=")[0].strip()
        if name != key:
            lines.append(existing)
        elif not replaced:  # the first place it was set; later duplicates would win: dropped
            lines.append(line)
            replaced = True
    if not replaced:
        lines.append(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "\n".join(lines) + "\n", mode=0o600)
