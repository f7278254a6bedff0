"""Repair a transcript left by a process that stopped mid-round (a crash, a kill, a power
cut): every tool call must have exactly one result before the model sees it again.

A call with no recorded result may or may not have run. A read-only call (``parallel_safe``)
is harmless: it gets a "skipped" result and the model may simply call it again. Any other
call may have changed the world: it gets a result saying its effect is UNKNOWN, and it is
never run again on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_kernel.store.messages import Disposition, Message, append_in, of_session_in

SKIPPED_TEXT = (
    "skipped: not run, because the previous turn was interrupted before this call ran; "
    "call it again if you still need it"
)
UNKNOWN_TEXT = (
    "effect UNKNOWN: the previous process stopped while this call may have been running. "
    "It was not run again. Check whether it took effect before retrying."
)


def unanswered(transcript: list[Message]) -> list[tuple[Message, dict[str, Any]]]:
    """(assistant message, call) for every call with no result among the tool messages that
    follow that assistant message. Ids are matched within a round only: servers reuse ids
    such as ``call_0`` in every round."""
    missing = []
    for position, message in enumerate(transcript):
        if message.role != "assistant" or not message.tool_calls:
            continue
        answered = set()
        for later in transcript[position + 1 :]:
            if later.role != "tool":
                break
            answered.add(later.tool_call_id)
        missing += [
            (message, c) for c in message.tool_calls if str(c.get("id", "")) not in answered
        ]
    return missing


def repaired_in(
    cursor: Any, session_id: str, read_only: Callable[[str], bool], after_seq: int = 0
) -> list[Message]:
    """The session's transcript (after ``after_seq``, where its compacted view begins) with
    the missing results added, inside the caller's write transaction (the turn's first,
    which holds the session's lease).

    Only the last round can be incomplete (every turn repairs before it adds anything, and
    a compaction never replaces the latest round), so appending the results keeps them
    right after their assistant message.
    """
    transcript = of_session_in(cursor, session_id, after_seq)
    missing = unanswered(transcript)
    for _, call in missing:
        name = str(call.get("name", ""))
        safe = read_only(name)
        transcript.append(
            append_in(
                cursor,
                session_id,
                "tool",
                SKIPPED_TEXT if safe else UNKNOWN_TEXT,
                tool_call_id=str(call.get("id", "")),
                tool_name=name,
                disposition=Disposition.SKIPPED if safe else Disposition.UNKNOWN,
            )
        )
    return transcript
