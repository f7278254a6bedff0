"""The summary engine: one request to the summarizing model with the earlier summary and the
messages it is to replace, asking for a summary in fixed sections, so the next compaction
can fold it in again without losing what is still open."""

from __future__ import annotations

from hermes_sdk.context import (
    Compaction,
    CompactionRequest,
    ContextEngineContext,
    SummaryUnavailable,
    plain_summary,
    transcript_text,
)

__all__ = ["INSTRUCTIONS", "SummaryEngine"]

INSTRUCTIONS = """\
You write the working memory of an AI agent whose conversation with its user grew too long.
The messages below are about to be removed from the agent's context and replaced by what you
write; the agent keeps only your summary and the latest messages. Write what the agent needs
to carry on without asking the user again, in these sections (leave out an empty one):

## Goal
What the user wants overall, in their terms.
## Requests and decisions
What was asked, what was decided or agreed, and why; the user's preferences and corrections.
## Work done
What the agent did, with the concrete results: files created or changed (with paths),
commands run and what they showed, facts found. Say plainly when something failed.
## Open tasks
What is still to do or was left half done, and the next step.
## Details to keep
Names, numbers, identifiers, paths, URLs, error messages: anything exact that may be needed.

Write in the third person, plainly, without pleasantries. Do not invent anything. If an
earlier summary is given, fold it in: keep what still matters from it. Stay within about
{words} words."""

FOCUS = """
The user asked that this summary keep above all: {focus}
Give most of the words to that, and keep the rest short."""


class SummaryEngine:
    def __init__(self, context: ContextEngineContext) -> None:
        self.context = context

    async def compact(self, request: CompactionRequest) -> Compaction:
        words = max(100, int(request.summary_tokens * 0.7))
        instructions = INSTRUCTIONS.format(words=words)
        if request.focus:
            instructions += FOCUS.format(focus=request.focus)
        earlier = request.previous_summary or ""
        if len(earlier) > request.input_tokens * 2:  # never more than half of what fits
            earlier = earlier[: request.input_tokens * 2] + " […]"
        # The model's window is in tokens, the budget in characters: about four a token,
        # less some room for the instructions and the headings below.
        budget = request.input_tokens * 4 - len(instructions) - len(earlier) - 400
        text = transcript_text(request.head, budget_chars=max(budget, 1000))
        if earlier:
            text = f"[earlier summary]\n{earlier}\n\n[messages since]\n{text}"
        try:
            summary = await request.summarize(instructions, text, request.summary_tokens)
        except SummaryUnavailable as exc:
            fallback = plain_summary(
                request.head,
                previous_summary=request.previous_summary,
                read_only_tools=request.read_only_tools,
                budget_chars=request.summary_tokens * 4,
                focus=request.focus,
            )
            return Compaction(fallback, by_model=False, notice=f"{exc}; wrote a plain summary")
        return Compaction(summary.strip())
