"""Smart approval mode: the session's model, asked as a reviewer, approves or denies a flagged
command. Its word is taken only when it is exactly APPROVE or DENY; anything else (ESCALATE,
a sentence, an error, a timeout) goes to the user."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hermes_kernel.engine.aside import complete_from_thread
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.safety.approval import ApprovalRequest, Judge

__all__ = ["REVIEW_PROMPT", "model_judge"]

JUDGE_SECONDS = 60.0
REVIEW_PROMPT = (
    "You review shell commands that an AI agent wants to run for its user. Reply with one "
    "word. APPROVE: routine work whose effect is limited and clearly intended (for example "
    "deleting a build folder, force-pushing a personal feature branch). DENY: destroys data "
    "or systems, leaks secrets, or downloads and runs code from an unknown source. ESCALATE: "
    "anything you are unsure about."
)


def model_judge(
    route: Callable[[], ModelRoute], loop: Callable[[], asyncio.AbstractEventLoop | None]
) -> Judge:
    """A judge that asks ``route()``'s model on the turn's event loop ``loop()``; it runs in
    the tool's worker thread."""

    def judge(request: ApprovalRequest) -> str:
        running = loop()
        if running is None:
            return "ESCALATE"
        chosen = route()
        question = (
            f"Command: {request.command}\nFlagged because it {request.reason} "
            f"(rule {request.rule}); it runs on the {request.backend} backend."
        )
        return complete_from_thread(
            chosen, running, REVIEW_PROMPT, question, max_tokens=8, timeout=JUDGE_SECONDS
        )

    return judge
