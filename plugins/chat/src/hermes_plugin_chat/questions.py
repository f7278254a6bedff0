"""Questions a turn asks the user (approve a dangerous command, a tool's question), in the
words both shells use, and the plain-terminal version the one-shot mode uses.

A question the user leaves unanswered is answered no by the runtime once its time is up:
for an approval, the command does not run.
"""

from __future__ import annotations

import select
import sys
import threading

from hermes_sdk.runtime import Question

__all__ = [
    "APPROVAL_HINT",
    "answer_from_line",
    "question_text",
    "terminal_answer",
]

APPROVAL_HINT = "[o]nce · [s]ession · [a]lways · [d]eny"
_KEYS = {"once": "o", "session": "s", "command": "c", "always": "a", "deny": "d"}
"""The letter that answers each approval choice (``c``: always, exactly this command)."""
_APPROVALS = {
    "o": "once",
    "once": "once",
    "y": "once",
    "yes": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "c": "command",
    "command": "command",
    "d": "deny",
    "deny": "deny",
    "n": "deny",
    "no": "deny",
}


def question_text(question: Question) -> str:
    """The question as the chat shows it: an approval names the command on its own line; a
    tool's question lists its choices, numbered."""
    if question.kind == "approval":
        reason = question.text.split("\n", 1)[0]  # the runtime's text: the reason, then the command
        # Each answer with what it allows, so "always" is never wider than the user thinks.
        listed = "".join(
            f"\n  {_KEYS.get(choice.value, '?')}  {choice.label}" for choice in question.choices
        )
        return f"{reason}\n    {question.command or ''}{listed}"
    listed = "".join(f"\n    {n}. {choice.label}" for n, choice in enumerate(question.choices, 1))
    return f"question: {question.text}{listed}"


def hint(question: Question) -> str:
    if question.kind == "approval":
        keys = [_KEYS[choice.value] for choice in question.choices if choice.value in _KEYS]
        return "/".join(keys) if keys else APPROVAL_HINT
    return "type a number or your answer" if question.choices else "type your answer"


def decision(question: Question, line: str | None) -> str:
    """What answering ``question`` with ``line`` decides, in words (for an approval, the
    label of the choice: how wide an "always" is, and where it is saved)."""
    if line is None:
        return "no answer: denied" if question.kind == "approval" else "no answer"
    if question.kind != "approval":
        return f"answered: {line.strip()}"
    value = _APPROVALS.get(line.strip().lower(), "deny")
    labels = {choice.value: choice.label for choice in question.choices}
    if value == "deny" or value not in labels:
        return "denied"
    return labels[value]


def answer_from_line(question: Question, line: str) -> bool:
    """Answer ``question`` with what the user typed; False if it was closed meanwhile.

    An approval takes o/s/a/d (anything unclear denies); a tool's question takes a number,
    a choice's label, or (where the question allows) any answer in the user's words."""
    typed = line.strip()
    if question.kind == "approval":
        value = _APPROVALS.get(typed.lower(), "deny")
        if value == "deny" or value not in {choice.value for choice in question.choices}:
            return question.decline()
        return question.answer(value)
    choices = question.choices
    if typed.isdigit() and 1 <= int(typed) <= len(choices):
        return question.answer(choices[int(typed) - 1].value)
    for choice in choices:
        if typed.lower() == choice.label.lower():
            return question.answer(choice.value)
    if question.free_text and typed:
        return question.answer_text(typed)
    return question.decline()


_terminal = threading.Lock()


def terminal_answer(question: Question) -> None:
    """Ask on stderr and read stdin (both must be a terminal), in the calling thread."""
    with _terminal:
        prompt = "hermes: " if question.kind == "approval" else "hermes asks: "
        print(f"{prompt}{question_text(question)}\n  {hint(question)} > ", end="", file=sys.stderr)
        sys.stderr.flush()
        ready, _, _ = select.select([sys.stdin], [], [], question.timeout_s)
        if not ready:
            print("\n(no answer in time)", file=sys.stderr)
            question.decline()
            return
        line = sys.stdin.readline()
    if not line:
        question.decline()
        return
    if answer_from_line(question, line):
        print(f"  {decision(question, line)}", file=sys.stderr)
