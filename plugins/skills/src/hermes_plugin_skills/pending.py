"""Skill changes waiting for the user's approval (``skills.write_approval``), offered to
every front-end as the queue ``skills`` (``hermes_pending_writes``): each with its summary
and the unified diff ``hermes skills diff`` shows. Skills are the owner's: a person a
front-end serves (a ``user_scope``) sees none and decides none."""

from __future__ import annotations

from hermes_commons.proposals import Proposal, UnknownProposal
from hermes_plugin_skills import proposals
from hermes_plugin_skills.library import user_root
from hermes_plugin_skills.manage import SkillRefused, file_diff, stale
from hermes_sdk.pending_writes import PendingContext, PendingWrite

__all__ = ["QUEUE", "SkillWrites"]

QUEUE = "skills"


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class SkillWrites:
    """The home's skill changes, as the SDK's PendingWrites."""

    def __init__(self, context: PendingContext) -> None:
        self.home = context.home
        self.root = user_root(context.home)
        self.owner = context.user_scope is None

    def pending(self) -> list[PendingWrite]:
        if not self.owner:
            return []
        return [self._write(proposal) for proposal in proposals.pending(self.root)]

    def _write(self, proposal: Proposal) -> PendingWrite:
        try:
            change = proposals.change_of(proposal.payload)
        except (KeyError, TypeError) as exc:
            title, diff = f"a damaged change (no {_one_line(exc)}): reject it", ""
        else:
            title = change.summary()
            diff = "" if stale(self.root, change) else file_diff(self.root, change)
        return PendingWrite.of_proposal(QUEUE, proposal, title, diff)

    def _waiting(self, write_id: str) -> None:
        """UnknownProposal unless ``write_id`` waits (and this is the owner's queue)."""
        if not self.owner:
            raise UnknownProposal(
                f"no pending skill change {write_id}: skill changes are the owner's to review"
            )
        proposals.queue(self.root).get(write_id)

    def approve(self, write_id: str) -> str:
        from hermes_plugin_skills.tools import review

        self._waiting(write_id)
        try:
            return review(self.home, "approve", write_id, how="hermes skills")
        except SkillRefused as exc:  # a file changed since: it stays queued
            raise ValueError(f"{write_id} cannot be applied: {_one_line(exc)}") from None

    def reject(self, write_id: str) -> str:
        from hermes_plugin_skills.tools import review

        self._waiting(write_id)
        return review(self.home, "reject", write_id, how="hermes skills")
