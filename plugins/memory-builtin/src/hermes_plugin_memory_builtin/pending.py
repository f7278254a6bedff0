"""Memory writes waiting for the user's approval (``memory.write_approval``), offered to
every front-end as the queue ``memory`` (``hermes_pending_writes``): each with what it adds,
replaces or removes, and a unified diff of MEMORY.md or USER.md as approving would leave it."""

from __future__ import annotations

from hermes_commons.proposals import Proposal
from hermes_plugin_memory_builtin.files import MemoryUnreadable
from hermes_plugin_memory_builtin.memory import Memory, planned_operations
from hermes_plugin_memory_builtin.operations import MemoryRefused
from hermes_sdk.pending_writes import PendingContext, PendingWrite

__all__ = ["QUEUE", "MemoryWrites"]

QUEUE = "memory"


def _one_line(error: Exception) -> str:
    """The first line of ``error``: what went wrong, without the listing that follows."""
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


class MemoryWrites:
    """One person's queue (the context's ``user_scope``), as the SDK's PendingWrites."""

    def __init__(self, context: PendingContext) -> None:
        self.memory = Memory(context.home, context.user_scope, context.config)

    def pending(self) -> list[PendingWrite]:
        return [self._write(proposal) for proposal in self.memory.pending.pending()]

    def _write(self, proposal: Proposal) -> PendingWrite:
        try:
            operations = planned_operations(proposal.payload)
        except MemoryRefused as exc:
            title, diff = f"a write that cannot be made: {_one_line(exc)}", ""
        else:
            title, diff = self.memory.title(operations), self.memory.diff(operations)
        return PendingWrite.of_proposal(QUEUE, proposal, title, diff)

    def approve(self, write_id: str) -> str:
        self.memory.pending.get(write_id)  # UnknownProposal if it is not waiting
        try:
            return self.memory.approve(write_id)
        except (MemoryRefused, MemoryUnreadable) as exc:  # it stays queued
            raise ValueError(f"{write_id} cannot be written: {_one_line(exc)}") from None

    def reject(self, write_id: str) -> str:
        self.memory.pending.get(write_id)  # UnknownProposal if it is not waiting
        self.memory.pending.drop(write_id)
        return f"rejected {write_id}; nothing was written"
