"""Pending writes: changes the agent made that wait for the user's approval (memory writes,
skill edits when ``write_approval`` is on), offered to every front-end the same way.

A plugin that queues such changes (most keep them in a
:class:`~hermes_commons.proposals.ProposalQueue`) yields a
:class:`~hermes_sdk.specs.PendingWritesSpec` from ``hermes_pending_writes``. Its factory gets
a :class:`PendingContext` and returns a :class:`PendingWrites`: what waits, each with a line
saying what approving it does and a unified diff of the files it would change, and the
approve and reject that decide one. A front-end reaches every queue through
``Runtime.pending_writes`` and ``Runtime.decide_pending_write``::

    for write in await runtime.pending_writes():
        print(write.queue, write.id, write.title)
        print(write.diff)
    line = await runtime.decide_pending_write("memory", write.id, approve=True)

The kernel calls these methods in a worker thread, under the plugin-call deadline
(``plugins.hook_timeout_seconds``), never on the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["PendingContext", "PendingWrite", "PendingWrites", "Proposal", "UnknownProposal"]


class UnknownProposal(LookupError):
    """No proposal has that id (or the id is not one); the message says how to list them.
    A queue's ``decide`` and ``Runtime.decide_pending_write`` raise it."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "no such proposal"


@dataclass(frozen=True, slots=True)
class Proposal:
    """One change waiting in a queue (:class:`~hermes_commons.proposals.ProposalQueue`)."""

    id: str
    created_at: float
    source: str  # what proposed it: "cli", "gateway", "review", ...
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingWrite:
    """One change waiting for the user's decision."""

    queue: str
    """The queue it waits in: the name of the :class:`~hermes_sdk.specs.PendingWritesSpec`
    (``"memory"``, ``"skills"``)."""
    id: str
    """Its id within the queue: what ``approve`` and ``reject`` take."""
    title: str
    """One line saying what approving does (``add to MEMORY.md: the user prefers tabs``)."""
    diff: str
    """A unified diff of the file(s) approving would change, as they are now; ``""`` if
    none can be made (the file changed so that the write no longer applies)."""
    created_at: float
    """When it was proposed (Unix time)."""
    source: str | None
    """What proposed it (``"cli"``, ``"review"``, a platform), when known."""

    @classmethod
    def of_proposal(cls, queue: str, proposal: Proposal, title: str, diff: str) -> PendingWrite:
        """A proposal of a :class:`~hermes_commons.proposals.ProposalQueue`, described."""
        return cls(
            queue=queue,
            id=proposal.id,
            title=title,
            diff=diff,
            created_at=proposal.created_at,
            source=proposal.source,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingContext:
    """What a :class:`~hermes_sdk.specs.PendingWritesSpec`'s factory gets."""

    home: str
    """HERMES_HOME: where the plugin keeps its queue."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    user_scope: str | None = None
    """Whose writes: a person a front-end serves (``"telegram:42"``), None for the owner.
    A queue that keeps writes per person shows that person's only; one that is the owner's
    alone (skill edits) shows nothing to anyone else."""


class PendingWrites(Protocol):
    """One queue of pending writes, for one person (the context's ``user_scope``)."""

    def pending(self) -> list[PendingWrite]:
        """Every write waiting in the queue, oldest first."""
        ...

    def approve(self, write_id: str) -> str:
        """Make the change and drop it from the queue; return one line to show. Raise
        :class:`UnknownProposal` for an id that is not waiting, and
        ValueError (one line) when it cannot be made (an entry it replaces is gone, a file
        changed since): the write then stays pending."""
        ...

    def reject(self, write_id: str) -> str:
        """Drop the change, writing nothing; return one line to show. Raise
        :class:`UnknownProposal` for an id that is not waiting."""
        ...
