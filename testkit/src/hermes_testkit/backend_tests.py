"""``TerminalBackendTests``: the conformance suite every terminal backend passes.

Subclass it in your plugin's tests and build your backend::

    from hermes_testkit import TerminalBackendTests

    class TestAcmeBackend(TerminalBackendTests):
        def make_backend(self, context):
            return AcmeBackend(context)

``context`` is a :class:`~hermes_sdk.terminal.BackendContext` whose ``cwd`` is a fresh empty
folder (a local path; a remote backend may ignore it and start in its own workspace) and
whose ``env`` is a small allow-listed environment. The suite checks exit codes, stderr,
timeouts, large output, unicode, binary files, environment isolation, the background process
lifecycle, the working directory carried between commands, and interrupting a command.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_sdk.terminal import (
    INTERRUPTED_EXIT,
    TIMEOUT_EXIT,
    BackendContext,
    ProcessStatus,
    TerminalBackend,
)

__all__ = ["TerminalBackendTests"]

CANARY = "HERMES_CONFORMANCE_CANARY"


def _assert_same_bytes(got: bytes, want: bytes) -> None:
    """Say where two byte strings part, without pytest's diff: on CI (``CI`` set) pytest
    diffs long values whole, which takes minutes for a few kilobytes of binary."""
    if got == want:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
    where = f"first difference at byte {at}" if at is not None else "one is a prefix of the other"
    pytest.fail(f"read back {len(got)} bytes, wrote {len(want)}; {where}")


class TerminalBackendTests:
    """Conformance suite for :class:`~hermes_sdk.terminal.TerminalBackend` implementations."""

    slow_seconds: float = 10.0
    """How long to poll a background process before giving up on it."""

    def make_backend(self, context: BackendContext) -> TerminalBackend:
        raise NotImplementedError("subclasses return their backend built from context")

    @pytest.fixture
    def backend(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TerminalBackend]:
        # In Hermes' own process, where a leak would come from.
        monkeypatch.setenv(CANARY, "must-not-leak")
        context = BackendContext(
            session_id="conformance",
            home=str(tmp_path / "home"),
            cwd=str(tmp_path),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
        )
        backend = self.make_backend(context)
        try:
            yield backend
        finally:
            backend.close()

    # --- commands ------------------------------------------------------------------------

    def test_exit_codes(self, backend: TerminalBackend) -> None:
        assert backend.run("true").exit_code == 0
        assert backend.run("true").ok
        failed = backend.run("exit 3")
        assert failed.exit_code == 3 and not failed.ok

    def test_stdout_and_stderr_are_separate(self, backend: TerminalBackend) -> None:
        result = backend.run("echo out; echo err >&2")
        assert result.stdout == "out\n"
        assert result.stderr == "err\n"

    def test_a_syntax_error_is_a_failed_command(self, backend: TerminalBackend) -> None:
        result = backend.run("if then fi (")
        assert result.exit_code != 0
        assert result.stderr

    def test_stdin(self, backend: TerminalBackend) -> None:
        assert backend.run("cat", stdin="fed through stdin\n").stdout == "fed through stdin\n"

    def test_timeout_kills_the_command(self, backend: TerminalBackend) -> None:
        result = backend.run("sleep 30; echo finished", timeout=1)
        assert result.timed_out and result.exit_code == TIMEOUT_EXIT
        assert "finished" not in result.stdout  # killed, not waited for

    def test_large_output_arrives_whole(self, backend: TerminalBackend) -> None:
        result = backend.run("head -c 3000000 /dev/zero | tr '\\000' a")
        assert result.exit_code == 0
        assert len(result.stdout) == 3_000_000 and set(result.stdout) == {"a"}
        assert not result.truncated

    def test_output_streams_to_a_callback(self, backend: TerminalBackend) -> None:
        chunks: list[str] = []
        result = backend.run("for i in 1 2 3; do echo line $i; done", on_output=chunks.append)
        assert "".join(chunks) == result.stdout == "line 1\nline 2\nline 3\n"

    def test_unicode(self, backend: TerminalBackend) -> None:
        text = "héllo wörld ✓ 日本語 🚀"
        assert backend.run(f"printf '%s\\n' '{text}'").stdout == text + "\n"
        backend.write_file("ünïcode.txt", text.encode("utf-8"))
        assert backend.run("cat ünïcode.txt").stdout == text

    # --- files ---------------------------------------------------------------------------

    def test_binary_files_round_trip(self, backend: TerminalBackend) -> None:
        data = bytes(range(256)) * 64
        backend.write_file("nested/dir/blob.bin", data)
        _assert_same_bytes(backend.read_file("nested/dir/blob.bin"), data)
        assert backend.run("wc -c < nested/dir/blob.bin").stdout.strip() == str(len(data))

    def test_listing_a_directory(self, backend: TerminalBackend) -> None:
        backend.write_file("listing/b.txt", b"12345")
        backend.run("mkdir -p listing/sub")
        entries = {entry.name: entry for entry in backend.list_dir("listing")}
        assert set(entries) == {"b.txt", "sub"}
        assert entries["b.txt"].kind == "file" and entries["b.txt"].size == 5
        assert entries["sub"].kind == "dir"

    def test_a_missing_file_raises_oserror(self, backend: TerminalBackend) -> None:
        with pytest.raises(OSError):
            backend.read_file("does/not/exist.txt")
        with pytest.raises(OSError):
            backend.list_dir("does/not/exist")

    # --- environment and working directory -----------------------------------------------

    def test_environment_is_isolated(self, backend: TerminalBackend) -> None:
        assert backend.run(f"echo ${{{CANARY}:-unset}}").stdout == "unset\n"
        assert backend.run("echo $ONLY_HERE", env={"ONLY_HERE": "yes"}).stdout == "yes\n"
        assert backend.run("echo ${ONLY_HERE:-gone}").stdout == "gone\n"

    def test_working_directory_persists(self, backend: TerminalBackend) -> None:
        backend.run("mkdir -p work/inner && cd work/inner")
        assert backend.run("pwd").stdout.strip().endswith("/work/inner")
        assert backend.cwd.endswith("/work/inner")
        backend.write_file("here.txt", b"x")  # relative paths follow the working directory
        assert backend.run("ls").stdout.split() == ["here.txt"]
        assert backend.run("pwd", cwd="/").stdout == "/\n"  # an explicit cwd is for one call
        assert backend.cwd.endswith("/work/inner")

    # --- interrupts and background processes ---------------------------------------------

    def test_interrupt_stops_a_running_command(self, backend: TerminalBackend) -> None:
        cancel = threading.Event()
        timer = threading.Timer(0.5, cancel.set)
        timer.start()
        result = backend.run("sleep 30; echo finished", cancel=cancel)
        timer.cancel()
        assert result.interrupted and result.exit_code == INTERRUPTED_EXIT
        assert "finished" not in result.stdout  # killed, not waited for

    def _wait(self, backend: TerminalBackend, handle: str, until: str) -> ProcessStatus:
        output, offset = "", 0
        deadline = time.monotonic() + self.slow_seconds
        while True:
            status = backend.read_process(handle, offset)
            output += status.output
            offset = status.next_offset
            done = (until == "exit" and not status.running) or (until and until in output)
            if done or time.monotonic() > deadline:
                return ProcessStatus(
                    handle=handle,
                    running=status.running,
                    exit_code=status.exit_code,
                    output=output,
                    next_offset=offset,
                )
            time.sleep(0.1)

    def test_background_process_lifecycle(self, backend: TerminalBackend) -> None:
        handle = backend.start_process("echo started; sleep 30; echo never")
        status = self._wait(backend, handle, "started")
        assert status.running and status.exit_code is None
        assert "started" in status.output
        backend.kill_process(handle)
        status = self._wait(backend, handle, "exit")
        assert not status.running and "never" not in status.output

    def test_background_processes_stop_before_the_backend_closes(
        self, backend: TerminalBackend
    ) -> None:
        running = backend.start_process("echo up; sleep 30; echo never")
        ended = backend.start_process("echo done")
        self._wait(backend, running, "up")
        self._wait(backend, ended, "exit")
        backend.stop_processes()
        status = self._wait(backend, running, "exit")
        assert not status.running and "never" not in status.output
        assert backend.read_process(ended).exit_code == 0  # ended already: left alone

    def test_background_process_exit_code(self, backend: TerminalBackend) -> None:
        handle = backend.start_process("echo done; exit 4")
        status = self._wait(backend, handle, "exit")
        assert not status.running and status.exit_code == 4
        assert status.output == "done\n"
        with pytest.raises(KeyError):
            backend.read_process("000000000000")
