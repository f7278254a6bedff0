"""Approvals and tools' questions of front-end turns.

The tool environment has one approver for the process. In a process that also has its own
way to ask (a chat platform's users), this router sends a question to the front-end turn running
on that session, and every other one to the process's own asker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from hermes_kernel.runtime.turns import DECLINED, KernelTurn
from hermes_kernel.safety.approval import Answer, ApprovalRequest, Approver, NobodyToAsk
from hermes_kernel.tooling.environment import Ask
from hermes_sdk.runtime import QuestionChoice

__all__ = ["TurnQuestions", "approval_choices"]


def approval_choices(request: ApprovalRequest) -> tuple[QuestionChoice, ...]:
    """What the user may answer, each label saying exactly what it allows and, for an
    "always", what it saves to config.yaml: this exact command (the narrower rule) or the
    command's whole rule class. Hermes's own state is allowed this once or not at all, and
    a plugin's check has no rule class to save."""
    once = QuestionChoice(value=Answer.ONCE.value, label="Allow this command once")
    deny = QuestionChoice(value=Answer.DENY.value, label="Deny")
    if request.guarded:
        return (once, deny)
    every = f"every command that {request.reason}"
    choices = [
        once,
        QuestionChoice(value=Answer.SESSION.value, label=f"Allow {every}, for this session"),
    ]
    if request.exact is not None:
        choices.append(
            QuestionChoice(
                value=Answer.COMMAND.value,
                label="Always allow exactly this command: saves approvals.allow_commands: "
                f"[{_quoted(request.exact)}] in config.yaml",
            )
        )
    if request.rule != "plugin" and not request.gate:
        choices.append(
            QuestionChoice(
                value=Answer.ALWAYS.value,
                label=f"Always allow {every}: saves approvals.allow: [{request.rule}] in "
                "config.yaml (remove it there to be asked again)",
            )
        )
    choices.append(deny)
    return tuple(choices)


def _quoted(entry: str) -> str:
    """A command as YAML shows it in a flow list: double-quoted, with its escapes (a JSON
    string is one), so a line break shows as ``\n`` as it is saved."""
    return json.dumps(entry, ensure_ascii=False)


class TurnQuestions:
    def __init__(
        self,
        fallback_approver: Approver | None = None,
        fallback_ask_for: Callable[[str], Ask] | None = None,
    ) -> None:
        self.turns: dict[str, KernelTurn] = {}
        """Session id -> the front-end turn running on it."""
        self._fallback_approver = fallback_approver
        self._fallback_ask_for = fallback_ask_for

    def approver(self, request: ApprovalRequest) -> Answer | None:
        turn = self.turns.get(request.session_id)
        if turn is None:
            if self._fallback_approver is None:
                raise NobodyToAsk("no one is watching this session")
            return self._fallback_approver(request)
        if not turn.answers_questions:
            raise NobodyToAsk("this front-end has nobody to ask")
        text = f"Approve this command? It {request.reason}.\n\n{request.command}"
        value = turn.ask("approval", text, approval_choices(request), command=request.command)
        if value == DECLINED:
            return Answer.DENY
        return Answer(value) if value else None

    def ask_for(self, session_id: str) -> Ask:
        fallback = self._fallback_ask_for(session_id) if self._fallback_ask_for else None

        def ask(question: str, choices: Sequence[str]) -> str | None:
            turn = self.turns.get(session_id)
            if turn is None:
                return fallback(question, choices) if fallback is not None else None
            if not turn.answers_questions:
                return None
            listed = list(choices)
            options = [QuestionChoice(value=str(i), label=c) for i, c in enumerate(listed)]
            value = turn.ask("question", question, options, free_text=True)
            if not value:
                return None
            chosen = {option.value: option.label for option in options}
            return chosen.get(value, value)  # a choice's value, or the user's own words

        return ask
