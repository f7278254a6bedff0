"""Atomic writes (whole or not at all, with the mode asked for) and the cross-process lock."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_commons.files import atomic_write_bytes, atomic_write_text, write_cache_json
from hermes_commons.locks import FileLock, LockTimeout, lock_holder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_write_replaces_the_file_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "notes.txt"
    atomic_write_text(path, "first\n")
    atomic_write_text(path, "zweite - ünïcode\r\n")
    assert path.read_bytes() == "zweite - ünïcode\r\n".encode()
    assert os.listdir(path.parent) == ["notes.txt"]


def test_a_secret_gets_its_mode_and_a_file_keeps_the_one_it_had(tmp_path: Path) -> None:
    secret = tmp_path / ".env"
    atomic_write_text(secret, "KEY=1\n", mode=0o600)
    assert _mode(secret) == 0o600
    script = tmp_path / "run.sh"
    atomic_write_bytes(script, b"#!/bin/sh\n", mode=0o755)
    assert _mode(script) == 0o755, "the umask does not take bits from an explicit mode"
    atomic_write_bytes(script, b"#!/bin/sh\necho\n")
    assert _mode(script) == 0o755, "without a mode, a replaced file keeps its own"
    umask = os.umask(0o022)
    os.umask(umask)
    fresh = tmp_path / "fresh.txt"
    atomic_write_text(fresh, "x")
    assert _mode(fresh) == 0o666 & ~umask, "a new file gets what open() would give it"


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(TypeError):
        atomic_write_bytes(path, "not bytes")  # type: ignore[arg-type]  # the failure tested
    assert path.read_text(encoding="utf-8") == "old"
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write_text(tmp_path / "folder", "cannot replace a folder")
    assert sorted(os.listdir(tmp_path)) == ["folder", "jobs.json"]


def test_a_cache_is_written_only_when_it_reads_back_the_same(tmp_path: Path) -> None:
    assert write_cache_json(tmp_path / "cache.json", {"a": [1, 2]}) is True
    assert (tmp_path / "cache.json").read_text(encoding="utf-8") == '{"a": [1, 2]}'
    assert write_cache_json(tmp_path / "keys.json", {1: "integer keys come back as text"}) is False
    assert write_cache_json(tmp_path / "set.json", {"a": {1}}) is False
    assert not (tmp_path / "keys.json").exists() and not (tmp_path / "set.json").exists()


# --- the lock ---------------------------------------------------------------------------


@pytest.fixture
def held_elsewhere(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A lock held by another process until the test ends (or kills it)."""
    path = tmp_path / "cron" / ".jobs.lock"
    script = textwrap.dedent(
        f"""
        import sys
        from hermes_commons.locks import FileLock
        with FileLock({str(path)!r}):
            print("held", flush=True)
            sys.stdin.read()
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    yield path, holder
    holder.kill()
    holder.wait()


def test_another_process_holding_the_lock_is_named_after_the_timeout(
    held_elsewhere: tuple[Path, subprocess.Popen[str]],
) -> None:
    path, holder = held_elsewhere
    assert lock_holder(path) == holder.pid
    started = time.monotonic()
    with pytest.raises(LockTimeout) as raised:
        FileLock(path, timeout=0.3).acquire()
    assert 0.3 <= time.monotonic() - started < 2
    assert raised.value.holder == holder.pid
    assert str(raised.value) == (
        f"{path} is locked by pid {holder.pid} for more than 0.3 s; try again when it is done"
    )
    with pytest.raises(LockTimeout, match=rf"locked by pid {holder.pid}; try again"):
        FileLock(path, timeout=0).acquire()


def test_a_lock_is_free_again_when_its_holder_dies(
    held_elsewhere: tuple[Path, subprocess.Popen[str]],
) -> None:
    path, holder = held_elsewhere
    holder.kill()
    holder.wait()
    assert lock_holder(path) is None
    with FileLock(path, timeout=0) as lock:
        assert lock.held and lock_holder(path) == os.getpid()
    assert not lock.held and lock_holder(path) is None
    assert path.read_text(encoding="utf-8") == "", "a released lock names no holder"


def test_a_holder_that_wrote_no_pid_is_never_a_pid_to_signal(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / ".lock"
    path.write_text("0\n", encoding="utf-8")
    with open(path, "rb") as other:  # a lock taken by something that is not a FileLock
        fcntl.flock(other, fcntl.LOCK_EX)
        assert lock_holder(path) is None
        with pytest.raises(LockTimeout, match="locked by another process; try again"):
            FileLock(path, timeout=0).acquire()


def test_a_waiter_gets_the_lock_when_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    order: list[str] = []
    first = FileLock(path).acquire()

    def wait_for_it() -> None:
        with FileLock(path, timeout=5):
            order.append("second")

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    time.sleep(0.1)
    order.append("first")
    first.release()
    waiter.join(5)
    assert order == ["first", "second"], "two locks in one process exclude each other too"


def test_a_lock_is_not_taken_twice_by_one_holder(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / ".lock")
    with lock, pytest.raises(RuntimeError, match="already locked"):
        lock.acquire()
    assert lock_holder(tmp_path / "missing.lock") is None
