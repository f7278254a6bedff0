"""The periodic memory check: every ``learning.nudge_every_turns`` user turns, a background
review looks at the recent conversation for what belongs in MEMORY.md or USER.md."""

from __future__ import annotations

from hermes_sdk import ReviewSpec

__all__ = ["MEMORY_CHECK", "memory_check"]

MEMORY_CHECK = """\
# Memory check

You are looking back, in the background, at the recent part of a conversation; the user does
not see this. Is there anything that deserves to go into memory: the user's preferences, facts
about them or their environment, lessons that will matter in later sessions? Use the memory
tool for each; do not repeat what memory already holds. Never save secrets. Finish with one
line: what you saved, or NOTHING."""


def memory_check() -> ReviewSpec:
    return ReviewSpec(
        name="memory",
        description="every few user turns, keep what the conversation says about the user",
        trigger="periodic",
        instructions=MEMORY_CHECK,
        tools=frozenset({"memory", "session_search"}),
        keeps_with=frozenset({"memory"}),
    )
