"""Edit text the way a careful person would: replace one exact passage, or apply a
unified diff, tolerating whitespace that differs only in indentation or at line ends.

Pure functions on strings; they raise PatchError with a message the model can act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PatchError", "apply_unified_diff", "replace_text"]


class PatchError(ValueError):
    pass


def _stripped(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines]


def _fuzzy_windows(lines: list[str], wanted: list[str]) -> list[int]:
    """Start indexes where ``wanted`` matches ``lines`` ignoring surrounding whitespace."""
    target = _stripped(wanted)
    size = len(target)
    stripped = _stripped(lines)
    return [i for i in range(len(lines) - size + 1) if stripped[i : i + size] == target]


def replace_text(text: str, old: str, new: str, replace_all: bool = False) -> tuple[str, str]:
    """(the new text, how it matched). ``old`` must occur once unless ``replace_all``."""
    if not old:
        raise PatchError("old_string is empty: give the exact text to replace")
    count = text.count(old)
    if count == 1 or (count > 1 and replace_all):
        return text.replace(old, new), f"replaced {count} exact match{'es' * (count > 1)}"
    if count > 1:
        raise PatchError(
            f"old_string occurs {count} times; add surrounding lines to make it unique, or "
            "set replace_all"
        )
    lines = text.splitlines(keepends=True)
    wanted = old.strip("\n").splitlines()
    starts = _fuzzy_windows([line.rstrip("\r\n") for line in lines], wanted) if wanted else []
    if not starts:
        raise PatchError(
            "old_string was not found (not even ignoring indentation and trailing spaces); "
            "read the file again and copy the text exactly"
        )
    if len(starts) > 1 and not replace_all:
        raise PatchError(
            f"old_string matches {len(starts)} places when whitespace is ignored; add "
            "surrounding lines to make it unique"
        )
    replacement = new.strip("\n")
    for start in reversed(starts):
        ending = "\n" if lines[start + len(wanted) - 1].endswith("\n") else ""
        block = [replacement + ending] if replacement or ending else []
        lines[start : start + len(wanted)] = block
    return "".join(lines), "replaced ignoring whitespace differences"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class _Hunk:
    old_start: int
    old: list[str]
    new: list[str]


def _hunks(diff: str) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    current: _Hunk | None = None
    for line in diff.splitlines():
        match = _HUNK.match(line)
        if match:
            current = _Hunk(int(match.group(1)), [], [])
            hunks.append(current)
        elif current is None or line.startswith(("--- ", "+++ ", "\\ No newline")):
            continue
        elif line.startswith("+"):
            current.new.append(line[1:])
        elif line.startswith("-"):
            current.old.append(line[1:])
        else:  # context: " text", or an empty line some tools write for an empty context
            current.old.append(line[1:] if line.startswith(" ") else line)
            current.new.append(line[1:] if line.startswith(" ") else line)
    if not hunks:
        raise PatchError("the diff has no hunks (@@ -a,b +c,d @@ lines)")
    return hunks


def apply_unified_diff(text: str, diff: str) -> tuple[str, str]:
    """Apply every hunk of a unified diff; each hunk is found near its stated line first,
    then anywhere, exactly or ignoring whitespace. All hunks apply, or none."""
    had_newline = text.endswith("\n")
    lines = text.splitlines()
    offset = 0
    fuzzy = 0
    for number, hunk in enumerate(_hunks(diff), 1):
        size = len(hunk.old)
        exact = [i for i in range(len(lines) - size + 1) if lines[i : i + size] == hunk.old]
        starts = exact or _fuzzy_windows(lines, hunk.old)
        if not exact and starts:
            fuzzy += 1
        if not starts:
            raise PatchError(
                f"hunk {number} (at line {hunk.old_start}) does not match the file; read the "
                "file again and make the diff from its current text"
            )
        expected = hunk.old_start - 1 + offset
        start = min(starts, key=lambda i: abs(i - expected))
        lines[start : start + size] = hunk.new
        offset += len(hunk.new) - size
    result = "\n".join(lines) + ("\n" if had_newline or not text else "")
    how = "applied the diff" + (f" ({fuzzy} hunk(s) ignoring whitespace)" if fuzzy else "")
    return result, how
