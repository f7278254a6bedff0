"""``/rollback`` in the chat, and the text both it and ``hermes checkpoints`` show.

``/rollback`` or ``/rollback N`` puts the session's folder back as it was before the last
(or the Nth last) change a tool made; ``/rollback ID [PATH]`` restores one checkpoint (the
one a rollback saved, to undo it); ``/rollback list`` shows them. Every restore first saves
the folder as it is, so it can itself be undone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hermes_commons.text import when
from hermes_plugin_checkpoints.observer import where_of
from hermes_plugin_checkpoints.settings import bounds_from
from hermes_plugin_checkpoints.shadow import (
    Bounds,
    Checkpoint,
    CheckpointError,
    Restored,
    ShadowRepo,
)
from hermes_sdk import SlashContext

__all__ = ["describe_restored", "listing", "rollback"]

USAGE = "usage: /rollback [N] | /rollback list | /rollback ID [PATH]"
_HEADER = "  N    ID            WHEN              WHAT"
_MOST_STEPS = 9999  # /rollback N takes up to four digits; a longer number is an id


def listing(repo: ShadowRepo, checkpoints: Sequence[Checkpoint]) -> list[str]:
    """The checkpoints as lines, newest first, each with the N ``/rollback N`` takes."""
    if not checkpoints:
        return [f"no checkpoints of {repo.folder} yet"]
    lines = [f"Checkpoints of {repo.folder}, newest first:", _HEADER]
    steps = 0
    for checkpoint in checkpoints:
        step = ""
        if checkpoint.kind == "tool":
            steps += 1
            step = str(steps)
        lines.append(f"  {step:<4} {checkpoint.id}  {when(checkpoint.created)}  {checkpoint.what}")
    return lines


def _names(names: tuple[str, ...]) -> str:
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return ", ".join(names[:8]) + more


def describe_restored(repo: ShadowRepo, restored: Restored) -> str:
    checkpoint = restored.checkpoint
    place = f"{restored.path} in {repo.folder}" if restored.path else str(repo.folder)
    lines = [
        f"Restored {place} as it was {checkpoint.what} (checkpoint {checkpoint.id}, "
        f"{when(checkpoint.created)})."
    ]
    if restored.put_back:
        lines.append(f"Put back: {_names(restored.put_back)}.")
    if restored.removed:
        lines.append(f"Removed (made since): {_names(restored.removed)}.")
    if not restored.put_back and not restored.removed:
        lines.append("Nothing differed: no file was changed.")
    lines.append(
        f"To undo this: /rollback {restored.before.id}, or: hermes checkpoints restore "
        f"{restored.before.id} --dir {repo.folder}"
    )
    return "\n".join(lines)


def _repo(context: SlashContext) -> ShadowRepo:
    where = where_of(context.session_id)
    folder = where.folder if where is not None else Path(context.cwd)
    try:
        bounds = bounds_from(context.config)
    except ValueError:
        bounds = Bounds()  # the kernel reports a wrong section; restoring needs none of it
    return ShadowRepo(context.home, folder, bounds)


def rollback(args: str, context: SlashContext) -> str:
    """The ``/rollback`` handler. Raises CheckpointError (one line) when it cannot."""
    repo = _repo(context)
    words = args.split()
    checkpoints = repo.checkpoints()
    if words[:1] == ["list"]:
        return "\n".join(listing(repo, checkpoints))
    if len(words) > 2:
        raise CheckpointError(USAGE)
    if not words or (words[0].isdigit() and int(words[0]) <= _MOST_STEPS):
        if len(words) > 1:
            raise CheckpointError(USAGE)
        steps = int(words[0]) if words else 1
        if steps < 1:
            raise CheckpointError(USAGE)
        made_by_tools = [c for c in checkpoints if c.kind == "tool"]
        if not made_by_tools:
            raise CheckpointError(f"no checkpoints of {repo.folder} yet: nothing to roll back")
        if steps > len(made_by_tools):
            raise CheckpointError(
                f"only {len(made_by_tools)} checkpoint{'s' if len(made_by_tools) != 1 else ''} "
                f"of {repo.folder} to roll back to (/rollback list shows them)"
            )
        return describe_restored(repo, repo.restore(made_by_tools[steps - 1]))
    checkpoint = repo.find(words[0])
    return describe_restored(repo, repo.restore(checkpoint, words[1] if len(words) > 1 else ""))
