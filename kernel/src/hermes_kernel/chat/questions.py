"""Questions a tool asks the user mid-turn (approve a dangerous command, clarify), in the
words both shells use, and the plain-terminal version the one-shot mode uses.

Questions arrive from tool worker threads and block them until answered; an unanswered
question times out, which for an approval means deny.
"""

from __future__ import annotations

import select
import sys
import threading
from collections.abc import Sequence

from hermes_kernel.safety.approval import Answer, ApprovalRequest, Approver
from hermes_kernel.tooling.environment import Ask

__all__ = [
    "APPROVAL_CHOICES",
    "approval_question",
    "parse_approval",
    "parse_choice",
    "terminal_approver",
    "terminal_ask",
]

APPROVAL_CHOICES = "[o]nce · [s]ession · [a]lways · [d]eny"
_ANSWERS = {
    "o": Answer.ONCE,
    "once": Answer.ONCE,
    "y": Answer.ONCE,
    "yes": Answer.ONCE,
    "s": Answer.SESSION,
    "session": Answer.SESSION,
    "a": Answer.ALWAYS,
    "always": Answer.ALWAYS,
    "d": Answer.DENY,
    "deny": Answer.DENY,
    "n": Answer.DENY,
    "no": Answer.DENY,
}


def approval_question(request: ApprovalRequest) -> str:
    return f"approve? this command {request.reason} [{request.rule}]:\n    {request.command}"


def parse_approval(text: str) -> Answer:
    """The answer a typed line means; anything unclear is a denial."""
    return _ANSWERS.get(text.strip().lower(), Answer.DENY)


def parse_choice(text: str, choices: Sequence[str]) -> str:
    """A typed number picks that choice; anything else is the answer as typed."""
    stripped = text.strip()
    if stripped.isdigit() and 1 <= int(stripped) <= len(choices):
        return choices[int(stripped) - 1]
    return stripped


_terminal = threading.Lock()


def _read_line(prompt: str, timeout: float) -> str | None:
    with _terminal:
        print(prompt, end="", file=sys.stderr, flush=True)
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            print("\n(no answer in time)", file=sys.stderr)
            return None
        line = sys.stdin.readline()
        return line if line else None


def terminal_approver(timeout: float) -> Approver:
    """Asks on stderr and reads stdin (both must be a terminal)."""

    def approve(request: ApprovalRequest) -> Answer | None:
        line = _read_line(f"hermes: {approval_question(request)}\n  {APPROVAL_CHOICES} > ", timeout)
        return None if line is None else parse_approval(line)

    return approve


def terminal_ask(timeout: float) -> Ask:
    def ask(question: str, choices: Sequence[str]) -> str | None:
        listed = "".join(f"\n  {n}. {choice}" for n, choice in enumerate(choices, 1))
        line = _read_line(f"hermes asks: {question}{listed}\n  > ", timeout)
        return None if line is None else parse_choice(line, choices)

    return ask
