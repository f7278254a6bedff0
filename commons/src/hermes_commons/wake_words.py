"""Wake words: for a platform with no mention of a bot to look for (iMessage) or besides
one (WhatsApp), group messages that match one of a list of patterns are for the bot.

``platforms.NAME.mention_patterns`` is a list of regular expressions (any case), or one;
:func:`compile_wake_words` checks it with a one-line error, and :func:`woken` tells whether
a text matches and gives it without a leading wake word ("Hermes, what time is it?" ->
"what time is it?")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["compile_wake_words", "woken"]


def compile_wake_words(raw: object, setting: str) -> tuple[re.Pattern[str], ...]:
    """The patterns of ``setting`` (its name, for the error), compiled."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list | tuple) or not all(isinstance(item, str) for item in raw):
        raise PlatformNotConfigured(f"{setting} is a list of patterns, not {raw!r}")
    compiled = []
    for pattern in raw:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            raise PlatformNotConfigured(
                f"{setting}: {pattern!r} is not a regular expression ({exc})"
            ) from None
    return tuple(compiled)


def woken(text: str, patterns: Sequence[re.Pattern[str]]) -> tuple[str, bool]:
    """Whether one of ``patterns`` is in ``text``, and the text without it when it leads
    (only a leading one: a later match is part of what is said)."""
    if not any(pattern.search(text) for pattern in patterns):
        return text, False
    stripped = text.lstrip()
    for pattern in patterns:
        match = pattern.match(stripped)
        if match:
            return stripped[match.end() :].lstrip(" ,:-") or text, True
    return text, True
