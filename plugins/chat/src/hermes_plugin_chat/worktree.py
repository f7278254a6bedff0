"""``hermes chat --worktree``: the session works in a git worktree of its own, on a new
branch, so the agent's edits never touch the user's checkout. Made under the repository's
``.worktrees/`` (git ignores nested worktrees' files only if told: the folder gets its own
``.gitignore``); on leaving, a worktree with no changes and no new commits is removed, one
with work in it is kept and named."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Worktree", "WorktreeError", "make_worktree"]

FOLDER = ".worktrees"


class WorktreeError(Exception):
    """One line: why no worktree could be made."""


@dataclass(frozen=True)
class Worktree:
    repository: Path
    path: Path
    branch: str
    base: str
    """The commit it started from."""

    def finish(self) -> str:
        """Remove it if nothing was done in it; one line saying what became of it."""
        status = _git(self.path, "status", "--porcelain")
        head = _git(self.path, "rev-parse", "HEAD").strip()
        if status.strip() or head != self.base:
            return (
                f"the worktree {self.path} (branch {self.branch}) has the session's work: "
                f"merge it with git merge {self.branch}, or remove it with "
                f"git worktree remove {self.path}"
            )
        _git(self.repository, "worktree", "remove", "--force", str(self.path))
        _git(self.repository, "branch", "-D", self.branch)
        return f"the worktree {self.path} had no changes and was removed"


def make_worktree(cwd: Path) -> Worktree:
    """A new worktree of the repository ``cwd`` is in, on a branch ``hermes/<time>``."""
    try:
        top = Path(_git(cwd, "rev-parse", "--show-toplevel").strip())
        base = _git(top, "rev-parse", "HEAD").strip()
    except WorktreeError as exc:
        raise WorktreeError(f"--worktree needs a git repository with a commit: {exc}") from None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = top / FOLDER
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    path, branch = folder / f"hermes-{stamp}", f"hermes/{stamp}"
    suffix = 1
    while path.exists():
        suffix += 1
        path, branch = folder / f"hermes-{stamp}-{suffix}", f"hermes/{stamp}-{suffix}"
    _git(top, "worktree", "add", "-q", "-b", branch, str(path), base)
    return Worktree(repository=top, path=path, branch=branch, base=base)


def _git(cwd: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise WorktreeError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} took longer than 30 s") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise WorktreeError(lines[-1] if lines else f"git {args[0]} failed")
    return done.stdout
