"""The lesson review: after a turn that taught something (many tool calls, a failure that
was worked around, the user's correction), a background review decides whether the method
deserves a skill, or a patch to one."""

from __future__ import annotations

from hermes_sdk import ReviewSpec

__all__ = ["SKILL_REVIEW", "skill_review"]

SKILL_REVIEW = """\
# Background review

You are looking back, in the background, at a turn this agent just finished; the user does not
see this conversation. Decide whether it taught something worth keeping for next time:
- a reusable method (steps, commands, pitfalls) for a kind of task that will come again: check
  skills_list first; improve a matching skill with skill_manage action=patch, or create one with
  skill_manage action=create (SKILL.md with name and description frontmatter, then the steps);
- durable facts about the user or their environment: the memory tool.
Most turns deserve nothing. Never save secrets, one-off details or what the transcript already
says plainly. Finish with one line: what you saved, or NOTHING."""


def skill_review() -> ReviewSpec:
    # The memory tools are another plugin's: used when installed, left out otherwise.
    return ReviewSpec(
        name="skills",
        description="after a turn that taught something, keep the method as a skill",
        trigger="lesson",
        instructions=SKILL_REVIEW,
        tools=frozenset({"skills_list", "skill_view", "skill_manage", "memory", "session_search"}),
        keeps_with=frozenset({"skill_manage", "memory"}),
        read_only_tools=True,
    )
