"""The shadow repository of one working folder, and the snapshots and restores made in it.

``HERMES_HOME/checkpoints/<key>/git`` is a git directory whose work tree is the folder; git
is always run with ``--git-dir`` and ``--work-tree`` given, so it never looks for, reads or
writes the folder's own ``.git`` (git skips any path named ``.git`` when it adds files, and
the exclude file names it too). The folder's ``.gitignore`` files are honoured: what they
ignore is neither saved nor touched by a restore.

Each checkpoint is a root commit (no parent) named by a ref ``refs/checkpoints/NNNNNNNNNN``:
its id (the commit's first 12 hex digits) never changes, and dropping the oldest is deleting
its ref and pruning the objects nothing else uses (file versions are shared by content).

The ``git`` program is run as a subprocess: it is what does this best (the index makes a
snapshot of an unchanged folder cost one directory scan), it is on every developer's machine,
and a library (dulwich, pygit2) would add a dependency without saving any of that work.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout
from hermes_commons.text import one_line

__all__ = [
    "Bounds",
    "Checkpoint",
    "CheckpointError",
    "Restored",
    "ShadowRepo",
    "Snapshot",
    "folder_problem",
]

Kind = Literal["tool", "restore"]

REFS = "refs/checkpoints/"
COMMAND_SECONDS = 120.0
"""A git command run for the user (list, restore) at most; a snapshot has its own budget."""
TIDY_LOOSE = 200
"""Loose objects (a file each) past which :meth:`ShadowRepo.tidy` packs them."""
ALWAYS_EXCLUDED = (
    ".git",
    "node_modules/",
    "__pycache__/",
    "*.pyc",
    ".venv/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".DS_Store",
)
"""Left out of every snapshot: the folder's own repository, and caches that are rebuilt."""

# Git's own settings for the shadow repositories, in place of the user's ~/.gitconfig (a
# commit.gpgSign, a core.fsmonitor or a hook there must not run for a snapshot).
_GIT_CONFIG = """\
[safe]
\tdirectory = *
[core]
\tautocrlf = false
\tquotePath = false
\tfsmonitor = false
\tlogAllRefUpdates = false
\thooksPath = /dev/null
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
[commit]
\tgpgSign = false
"""


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one snapshot may take (``checkpoints:`` in config.yaml, as plain values)."""

    enabled: bool = True
    max_count: int = 50
    max_bytes: int = 200 * 1024 * 1024
    max_files: int = 20_000
    timeout_seconds: float = 3.0
    exclude: tuple[str, ...] = ()


class CheckpointError(Exception):
    """What went wrong, as one line for the user."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One snapshot of a folder."""

    commit: str
    tree: str
    number: int
    """Its place in the folder's sequence (1 is the first ever taken)."""
    created: float
    kind: Kind
    """``tool``: taken before a tool changed files; ``restore``: before a restore."""
    tool: str
    target: str
    """The file the tool wrote, the command it ran, or the checkpoint a restore put back."""
    session: str = ""

    @property
    def id(self) -> str:
        return self.commit[:12]

    @property
    def what(self) -> str:
        if self.kind == "restore":
            return f"before restoring {self.target}"
        return f"before {self.tool} {self.target}".rstrip()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The outcome of :meth:`ShadowRepo.snapshot`."""

    checkpoint: Checkpoint | None
    """The checkpoint holding the folder as it is now (None when skipped)."""
    created: bool = False
    """False when the folder was unchanged since ``checkpoint`` (or it was skipped)."""
    skipped: str = ""
    """Why no snapshot was taken, as one line."""


@dataclass(frozen=True, slots=True)
class Restored:
    """The outcome of :meth:`ShadowRepo.restore`."""

    checkpoint: Checkpoint
    before: Checkpoint
    """The folder as it was just before: restoring it undoes this restore."""
    path: str
    """The path restored, relative to the folder; "" for all of it."""
    put_back: tuple[str, ...]
    """Files written back as the checkpoint has them (changed or deleted since)."""
    removed: tuple[str, ...]
    """Files the checkpoint did not have, removed (they are kept in ``before``)."""


def folder_key(folder: Path) -> str:
    return hashlib.sha256(os.fsencode(folder)).hexdigest()[:16]


def folder_problem(folder: Path, home: Path) -> str | None:
    """Why ``folder`` (resolved) is not snapshotted at all, or None."""
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if folder == Path(folder.anchor):
        return f"{folder} is the root of the file system: too big to snapshot"
    if folder == Path.home().resolve():
        return f"{folder} is your home folder: too big to snapshot; start Hermes in a project"
    if folder.is_relative_to(home.resolve()):
        return f"{folder} is inside HERMES_HOME, which keeps the snapshots"
    return None


def _environment() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    environment.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="Hermes checkpoints",
        GIT_AUTHOR_EMAIL="checkpoints@hermes.invalid",
        GIT_COMMITTER_NAME="Hermes checkpoints",
        GIT_COMMITTER_EMAIL="checkpoints@hermes.invalid",
        LC_ALL="C",
    )
    return environment


class ShadowRepo:
    """The checkpoints of ``folder`` kept in ``home``."""

    def __init__(self, home: str | Path, folder: str | Path, bounds: Bounds | None = None):
        self.home = Path(home).resolve()
        self.folder = Path(folder).resolve()
        self.bounds = bounds or Bounds()
        self.base = self.home / "checkpoints"
        self.root = self.base / folder_key(self.folder)
        self.git_dir = self.root / "git"

    # --- git --------------------------------------------------------------------------------

    def _git(
        self,
        *args: str,
        deadline: float | None = None,
        stdin: bytes | None = None,
        fine: tuple[int, ...] = (0,),
    ) -> bytes:
        """Run git on the shadow repository with the folder as its work tree; its output.
        CheckpointError (one line) when it fails, or ``deadline`` (monotonic) passes."""
        timeout = COMMAND_SECONDS if deadline is None else deadline - time.monotonic()
        if timeout <= 0:
            raise CheckpointError(f"out of time (checkpoints.timeout_seconds) before git {args[0]}")
        where = [f"--git-dir={self.git_dir}", f"--work-tree={self.folder}"]
        return self._run([*where, *args], timeout, stdin, fine, cwd=self.folder)

    def _run(
        self,
        args: list[str],
        timeout: float,
        stdin: bytes | None = None,
        fine: tuple[int, ...] = (0,),
        cwd: Path | None = None,
    ) -> bytes:
        program = shutil.which("git")
        if program is None:
            raise CheckpointError("git is not installed (it keeps the checkpoints): install it")
        environment = _environment()
        environment["GIT_CONFIG_GLOBAL"] = str(self.base / "gitconfig")
        name = next((a for a in args if not a.startswith("--")), "")
        try:
            done = subprocess.run(
                [program, *args],
                cwd=cwd,
                env=environment,
                input=stdin,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CheckpointError(
                f"git {name} took longer than {timeout:.1f} s (checkpoints.timeout_seconds)"
            ) from None
        except OSError as exc:
            raise CheckpointError(f"cannot run git: {exc.strerror or exc}") from None
        if done.returncode not in fine:
            said = one_line(done.stderr.decode("utf-8", "replace"), 300)
            said = said or f"exit status {done.returncode}"
            raise CheckpointError(f"git {name} failed: {said}")
        return done.stdout

    def _ensure(self) -> None:
        if not (self.base / "gitconfig").is_file():
            atomic_write_text(self.base / "gitconfig", _GIT_CONFIG, sync=False)
        if not (self.git_dir / "HEAD").is_file():
            self.root.mkdir(parents=True, exist_ok=True)
            self._run(["init", "--quiet", "--bare", str(self.git_dir)], COMMAND_SECONDS)
            config = ["config", "--file", str(self.git_dir / "config"), "core.bare", "false"]
            self._run(config, COMMAND_SECONDS)
            atomic_write_text(self.root / "folder", f"{self.folder}\n", sync=False)
        # A git killed at its deadline leaves its lock (and a repack its temporary packs)
        # behind; under our lock none is live.
        (self.git_dir / "index.lock").unlink(missing_ok=True)
        for left in (self.git_dir / "objects" / "pack").glob("*tmp*"):
            left.unlink(missing_ok=True)
        exclude = self.git_dir / "info" / "exclude"
        wanted = self._excludes()
        try:
            current = exclude.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != wanted:
            atomic_write_text(exclude, wanted, sync=False)

    def _excludes(self) -> str:
        lines = [*ALWAYS_EXCLUDED, *self.bounds.exclude]
        # A folder holding HERMES_HOME would otherwise snapshot its own snapshots.
        if self.home.is_relative_to(self.folder) and self.home != self.folder:
            lines.append("/" + self.home.relative_to(self.folder).as_posix() + "/")
        return "# written by hermes-plugin-checkpoints at each snapshot\n" + "\n".join(lines) + "\n"

    @contextmanager
    def _locked(self, deadline: float | None) -> Iterator[None]:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            with FileLock(self.root / "lock", timeout=wait):
                yield
        except LockTimeout:
            raise CheckpointError(
                f"another Hermes is snapshotting {self.folder}; not waiting longer"
            ) from None

    # --- reading ----------------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint of the folder, newest first."""
        if not self.exists():
            return []
        fields = "%(refname)%1f%(objectname)%1f%(tree)%1f%(creatordate:unix)%1f%(contents)%1e"
        out = self._git("for-each-ref", f"--format={fields}", REFS)
        found = []
        for record in out.decode("utf-8", "replace").split("\x1e"):
            parts = record.strip("\n").split("\x1f")
            if len(parts) != 5:
                continue
            refname, commit, tree, created, message = parts
            number = refname.removeprefix(REFS)
            if not number.isdigit():
                continue
            found.append(_parse(commit, tree, int(number), float(created or 0), message))
        found.sort(key=lambda checkpoint: checkpoint.number, reverse=True)
        return found

    def find(self, wanted: str) -> Checkpoint:
        """The checkpoint whose id starts with ``wanted`` (4 hex digits at least)."""
        text = wanted.strip().lower()
        if len(text) < 4 or any(c not in "0123456789abcdef" for c in text):
            raise CheckpointError(
                f"{wanted!r} is not a checkpoint id (hermes checkpoints list shows them)"
            )
        matches = [c for c in self.checkpoints() if c.commit.startswith(text)]
        if not matches:
            raise CheckpointError(
                f"no checkpoint {wanted} for {self.folder} (hermes checkpoints list shows them)"
            )
        if len(matches) > 1:
            raise CheckpointError(f"{wanted} names {len(matches)} checkpoints; give more of it")
        return matches[0]

    # --- snapshots --------------------------------------------------------------------------

    def snapshot(
        self,
        *,
        kind: Kind = "tool",
        tool: str = "",
        target: str = "",
        session: str = "",
        deadline: float | None = None,
        force: bool = False,
    ) -> Snapshot:
        """Save the folder as it is now, unless it is unchanged since the last checkpoint.
        Skipped (with the reason) when the folder is over the bounds, unless ``force``.
        Raises CheckpointError when git fails or ``deadline`` (monotonic) passes."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self._locked(deadline):
            return self._snapshot(kind, tool, target, session, deadline, force)

    def _snapshot(
        self, kind: Kind, tool: str, target: str, session: str, deadline: float | None, force: bool
    ) -> Snapshot:
        self._ensure()
        if not force:
            reason = self._too_big(deadline)
            if reason:
                return Snapshot(None, skipped=reason)
        # --ignore-errors: a file we may not read is left out (exit 1), not the whole snapshot.
        self._git("add", "--all", "--ignore-errors", "--", ".", deadline=deadline, fine=(0, 1))
        tree = self._git("write-tree", deadline=deadline).decode().strip()
        existing = self.checkpoints()
        latest = existing[0] if existing else None
        if latest is not None and latest.tree == tree:
            return Snapshot(latest)
        if kind == "restore":  # any checkpoint of this very state will do to undo with
            same = next((c for c in existing if c.tree == tree), None)
            if same is not None:
                return Snapshot(same)
        message = _message(kind, tool, one_line(target, 200), session)
        commit = (
            self._git("commit-tree", "--no-gpg-sign", tree, "-m", message, deadline=deadline)
            .decode()
            .strip()
        )
        number = (latest.number + 1) if latest is not None else 1
        # The empty old value makes the ref's creation fail rather than overwrite one.
        self._git("update-ref", f"{REFS}{number:010d}", commit, "", deadline=deadline)
        created = Checkpoint(
            commit, tree, number, time.time(), kind, tool, one_line(target, 200), session
        )
        self._drop_oldest([created, *existing], deadline)
        return Snapshot(created, created=True)

    def _too_big(self, deadline: float | None) -> str:
        """Why the folder is over the bounds ("" when it is not): the files git would keep
        (the snapshot's and the new ones not ignored), counted and summed."""
        out = self._git(
            "ls-files", "-z", "--cached", "--others", "--exclude-standard", deadline=deadline
        )
        names = [name for name in out.split(b"\0") if name]
        if len(names) > self.bounds.max_files:
            return (
                f"{self.folder} has {len(names):,} files, over checkpoints.max_files "
                f"({self.bounds.max_files:,}); not snapshotted"
            )
        total = 0
        folder = os.fsencode(self.folder)
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue  # deleted since the last snapshot
            if total > self.bounds.max_bytes:
                limit = self.bounds.max_bytes / (1024 * 1024)
                return (
                    f"{self.folder} holds more than {limit:g} MB (checkpoints.max_mb); "
                    "not snapshotted"
                )
        return ""

    def _drop_oldest(self, newest_first: Sequence[Checkpoint], deadline: float | None) -> None:
        extra = newest_first[self.bounds.max_count :]
        if not extra:
            return
        commands = "".join(f"delete {REFS}{c.number:010d}\n" for c in extra)
        self._git("update-ref", "--stdin", stdin=commands.encode(), deadline=deadline)
        # The file versions only the dropped checkpoints had go now. Out of time, they go
        # at the next snapshot's pruning instead (an unreachable object harms nothing).
        with suppress(CheckpointError):
            self._git("prune", "--expire=now", deadline=deadline)

    def tidy(self, deadline: float) -> bool:
        """Pack the file versions a session's snapshots left loose (one file each) and drop
        those no checkpoint keeps, if the lock is free and there is something to do. True
        when it was done; a repack cut off by ``deadline`` is redone next time."""
        if not self.exists():
            return False
        try:
            with FileLock(self.root / "lock", timeout=0):
                self._ensure()
                counts = self._git("count-objects", "-v", deadline=deadline).decode()
                numbers = dict(line.split(": ", 1) for line in counts.splitlines() if ": " in line)
                if int(numbers.get("count", 0)) < TIDY_LOOSE and int(numbers.get("packs", 0)) < 2:
                    return False
                self._git("repack", "-a", "-d", "-q", deadline=deadline)
                self._git("prune", "--expire=now", deadline=deadline)
                return True
        except (LockTimeout, CheckpointError, ValueError):
            return False

    # --- restoring --------------------------------------------------------------------------

    def restore(self, checkpoint: Checkpoint, path: str = "") -> Restored:
        """Put the folder (or ``path`` in it) back as ``checkpoint`` has it. The folder as it
        is now is checkpointed first (whatever its size), so this can be undone; a file the
        checkpoint does not have is removed, and listed; ignored files are never touched."""
        relative = self.relative(path) if path else ""
        with self._locked(time.monotonic() + COMMAND_SECONDS):
            before = self._snapshot(
                "restore", "restore", _restoring(checkpoint, relative), "", None, force=True
            ).checkpoint
            if before is None:  # not reached: a forced snapshot is never skipped
                raise CheckpointError("could not save the folder as it is now; nothing restored")
            if relative and not (
                self._has(checkpoint.commit, relative) or self._has(before.commit, relative)
            ):
                raise CheckpointError(
                    f"{relative} is not in checkpoint {checkpoint.id}, nor in the folder now; "
                    "nothing restored"
                )
            changes = [
                (status, name)
                for status, name in self._changes(before.commit, checkpoint.commit)
                if _within(name, relative) and ".git" not in Path(name).parts
            ]
            if changes:
                spec = f":(literal){relative}" if relative else "."
                source = f"--source={checkpoint.commit}"
                self._git("restore", source, "--staged", "--worktree", "--", spec)
        put_back = tuple(sorted(name for status, name in changes if status != "D"))
        removed = tuple(sorted(name for status, name in changes if status == "D"))
        return Restored(checkpoint, before, relative, put_back, removed)

    def _has(self, commit: str, relative: str) -> bool:
        out = self._git("ls-tree", "-z", "--name-only", "--full-tree", commit, "--", relative)
        return bool(out.strip(b"\0"))

    def _changes(self, old: str, new: str) -> list[tuple[str, str]]:
        """(status, path) of each file that differs from ``old`` to ``new``: A, M, T or D."""
        out = self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
        fields = [os.fsdecode(field) for field in out.split(b"\0") if field]
        return [(fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]

    def relative(self, path: str) -> str:
        """``path`` (absolute, or relative to the folder) as a path inside the folder."""
        given = Path(os.path.expanduser(path))
        full = given if given.is_absolute() else self.folder / given
        resolved = Path(os.path.normpath(full))
        if not resolved.is_relative_to(self.folder):
            raise CheckpointError(f"{path} is not inside {self.folder}")
        relative = resolved.relative_to(self.folder).as_posix()
        if ".git" in Path(relative).parts:
            raise CheckpointError(f"{path} is in a .git folder, which checkpoints never touch")
        return "" if relative == "." else relative


def _within(name: str, relative: str) -> bool:
    return not relative or name == relative or name.startswith(relative + "/")


def _restoring(checkpoint: Checkpoint, relative: str) -> str:
    return f"{checkpoint.id} {relative}".rstrip()


def _message(kind: Kind, tool: str, target: str, session: str) -> str:
    subject = f"before restoring {target}" if kind == "restore" else f"before {tool} {target}"
    return (
        f"{subject.rstrip()}\n\nHermes-Kind: {kind}\nHermes-Tool: {tool}\n"
        f"Hermes-Target: {target}\nHermes-Session: {session}\n"
    )


def _parse(commit: str, tree: str, number: int, created: float, message: str) -> Checkpoint:
    fields: dict[str, str] = {}
    for line in message.splitlines():
        name, colon, value = line.partition(": ")
        if colon and name.startswith("Hermes-"):
            fields[name.removeprefix("Hermes-").lower()] = value
    kind: Kind = "restore" if fields.get("kind") == "restore" else "tool"
    return Checkpoint(
        commit,
        tree,
        number,
        created,
        kind,
        fields.get("tool", ""),
        fields.get("target", ""),
        fields.get("session", ""),
    )
