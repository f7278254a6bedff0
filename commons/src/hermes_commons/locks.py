"""A lock that two processes (a chat and the gateway, a command and the scheduler) respect:
an exclusive ``flock`` on a lock file, held for a ``with`` block.

Use it around a read-modify-write of a shared file, so no writer loses another's edit::

    with FileLock(folder / ".jobs.lock"):
        jobs = load()
        ...
        atomic_write_text(folder / "jobs.json", render(jobs))

Lock a separate file, not the one you replace: a rename puts a new file in its place, and
a lock on the old one protects nothing. The holder writes its pid into the lock file, so
one that waits too long is told who holds it (:class:`LockTimeout`). ``timeout=0`` tries
once, for "only one of these may run" locks held as long as a process runs; the operating
system releases a lock when its process dies, so a crash never leaves one behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["FileLock", "LockTimeout", "lock_holder"]

_FIRST_WAIT = 0.01
_LONGEST_WAIT = 0.2  # seconds between tries: quick for short holds, cheap for long ones


class LockTimeout(TimeoutError):
    """Another process held the lock longer than the caller would wait; the message names
    the lock file and the holder's pid (``holder``, None when it wrote none)."""

    def __init__(self, path: Path, timeout: float, holder: int | None) -> None:
        who = f"pid {holder}" if holder else "another process"
        waited = f" for more than {timeout:g} s" if timeout > 0 else ""
        super().__init__(f"{path} is locked by {who}{waited}; try again when it is done")
        self.path = path
        self.holder = holder


class FileLock:
    """An exclusive lock on ``path`` (created, with its folder, if missing) across processes
    and threads. ``timeout`` is how long :meth:`acquire` waits: None waits for as long as
    it takes, 0 tries once; past it, :class:`LockTimeout`. Not re-entrant."""

    def __init__(self, path: Path | str, timeout: float | None = 10.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> Self:
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already locked by this FileLock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            self._wait(fd)
        except BaseException:
            os.close(fd)
            raise
        # Written only once the lock is ours (opening did not truncate a holder's pid), in
        # one write of fixed width, so a reader sees the old pid or the new one, never part.
        os.pwrite(fd, f"{os.getpid():>10}\n".encode(), 0)
        os.ftruncate(fd, 11)
        self._fd = fd
        return self

    def release(self) -> None:
        """Release the lock (the file is emptied, then closed); a no-op when not held."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # emptied while still held: a pid in it is a holder's
            os.close(fd)

    def _wait(self, fd: int) -> None:
        if self.timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return
        deadline = time.monotonic() + self.timeout
        pause = _FIRST_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LockTimeout(self.path, self.timeout, _read_pid(self.path)) from None
                time.sleep(min(pause, left))
                pause = min(pause * 2, _LONGEST_WAIT)

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def lock_holder(path: Path | str) -> int | None:
    """The pid of the process holding ``path``'s lock; None when nobody holds it (a missing
    file is not held). It only looks: it holds nothing afterwards. One that holds the lock
    without having written a pid (not a :class:`FileLock`, or one in the instant between
    taking a lock and writing its pid) also reads as None: never a pid to signal."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read_pid(path)
    finally:
        os.close(fd)  # closing releases the shared lock taken just to look
    return None


def _read_pid(path: Path) -> int | None:
    try:
        pid = int(path.read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        return None
    return pid if pid > 0 else None
