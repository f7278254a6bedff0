"""The page as the model reads it: Playwright's accessibility snapshot for AI (roles, names,
text, and a ref for each element it can act on), with refs written ``[e12]`` and the whole
bounded in size."""

from __future__ import annotations

import re

__all__ = ["bounded", "compact", "ref_of"]

_REF = re.compile(r"\[ref=([a-z0-9]+)\]")
_GIVEN_REF = re.compile(r"^\s*[\[@]?(?:ref\s*=\s*)?([a-z]*\d*e\d+)\]?\s*$", re.IGNORECASE)


def compact(snapshot: str) -> str:
    """``[ref=e12]`` becomes ``[e12]``: the same ref in fewer tokens."""
    return _REF.sub(r"[\1]", snapshot)


def bounded(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a line, saying what was left out."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    rest = text[cut:].count("\n") + 1
    return (
        f"{text[:cut]}\n[… {rest} more lines not shown ({len(text)} characters in all, over "
        "browser.snapshot_chars): act on what is shown, or read the page whole with web_extract]"
    )


def ref_of(given: str) -> str:
    """The ref the model means by ``e12``, ``[e12]``, ``ref=e12`` or ``@e12`` (a ref in a
    frame reads ``f1e3``). ValueError for anything else."""
    found = _GIVEN_REF.match(given)
    if found is None:
        raise ValueError(f"{given!r} is not a ref: give one from the latest snapshot, such as e12")
    return found.group(1).lower()
