"""Repair a transcript left by a process that stopped mid-round (a crash, a kill, a power
cut): every tool call must have exactly one result before the model sees it again.

A call with no recorded result may or may not have run. A read-only call (``parallel_safe``)
is harmless: it gets a "skipped" result and the model may simply call it again. Any other
call may have changed the world: it gets a result saying its effect is UNKNOWN, and it is
never run again on its own.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_kernel.store.messages import Disposition, Messages

SKIPPED_TEXT = (
    "skipped: not run, because the previous turn was interrupted before this call ran; "
    "call it again if you still need it"
)
UNKNOWN_TEXT = (
    "effect UNKNOWN: the previous process stopped while this call may have been running. "
    "It was not run again. Check whether it took effect before retrying."
)


def repair(messages: Messages, session_id: str, read_only: Callable[[str], bool]) -> int:
    """Add the missing results; return how many were added."""
    transcript = messages.of_session(session_id)
    answered = {m.tool_call_id for m in transcript if m.role == "tool"}
    added = 0
    for message in transcript:
        for call in message.tool_calls or []:
            call_id = str(call.get("id", ""))
            if call_id in answered:
                continue
            name = str(call.get("name", ""))
            safe = read_only(name)
            messages.append(
                session_id,
                "tool",
                SKIPPED_TEXT if safe else UNKNOWN_TEXT,
                tool_call_id=call_id,
                tool_name=name,
                disposition=Disposition.SKIPPED if safe else Disposition.UNKNOWN,
            )
            answered.add(call_id)
            added += 1
    return added
