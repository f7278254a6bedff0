"""Run commands with subprocess on this machine.

Each command runs in its own process group (``start_new_session``), so a timeout or a stop
kills everything it started, not just the shell. The environment is exactly what the kernel
passed (an allow-list) plus the command's own variables.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from hermes_sdk.terminal import (
    CommandResult,
    FileEntry,
    OnOutput,
    OutputCollector,
    TerminalBackend,
    wrap_command,
)

_TICK = 0.05  # how often a running command checks its deadline and the stop flag
_PIPE_GRACE = 0.3  # a background child may hold the pipes open after the shell has exited


class LocalBackend(TerminalBackend):
    name = "local"
    on_this_machine = True

    def __init__(self, cwd: str, env: Mapping[str, str], shell: str | None = None) -> None:
        super().__init__(cwd)
        self.env = dict(env)
        self.shell = shell or shutil.which("bash") or "/bin/sh"

    def run(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
        on_output: OnOutput | None = None,
        cancel: threading.Event | None = None,
    ) -> CommandResult:
        started = time.perf_counter()
        directory = self._directory(cwd)
        script = wrap_command(command, directory, self.marker)
        process = subprocess.Popen(
            [self.shell, "-c", script],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**self.env, **(env or {})},
            start_new_session=True,
        )
        if stdin is not None:
            threading.Thread(target=_feed, args=(process, stdin), daemon=True).start()
        collector = OutputCollector(self.marker, on_output)
        deadline = started + timeout if timeout else None
        timed_out = interrupted = False
        with selectors.DefaultSelector() as selector:
            assert process.stdout is not None and process.stderr is not None
            selector.register(process.stdout, selectors.EVENT_READ, collector.stdout)
            selector.register(process.stderr, selectors.EVENT_READ, collector.stderr)
            exited_at: float | None = None
            while selector.get_map():
                for key, _ in selector.select(_TICK):
                    data = os.read(key.fd, 65536)
                    if data:
                        key.data(data)
                    else:
                        selector.unregister(key.fileobj)
                now = time.perf_counter()
                if deadline is not None and now > deadline and not timed_out:
                    timed_out = True
                    _kill_group(process)
                if cancel is not None and cancel.is_set() and not interrupted:
                    interrupted = True
                    _kill_group(process)
                if exited_at is None and process.poll() is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > _PIPE_GRACE:
                    break  # the shell is gone; what holds the pipes is a background child
        process.stdout.close()
        process.stderr.close()
        exit_code = process.wait()
        result, new_cwd = collector.result(
            exit_code, started, timed_out=timed_out, interrupted=interrupted
        )
        if new_cwd is not None and cwd is None:
            self.cwd = new_cwd
        return result

    def _directory(self, cwd: str | None) -> str:
        if cwd is None:
            if not os.path.isdir(self.cwd):  # deleted under us: start where the user is
                self.cwd = os.path.expanduser("~")
            return self.cwd
        return self._path(cwd)

    def _path(self, path: str) -> str:
        return os.path.expanduser(self.resolve(path))

    def read_file(self, path: str) -> bytes:
        return Path(self._path(path)).read_bytes()

    def write_file(self, path: str, data: bytes) -> None:
        target = Path(self._path(path))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def list_dir(self, path: str) -> list[FileEntry]:
        entries = []
        with os.scandir(self._path(path)) as found:
            for entry in found:
                if entry.is_symlink():
                    kind, size = "link", 0
                elif entry.is_dir():
                    kind, size = "dir", 0
                elif entry.is_file():
                    kind, size = "file", entry.stat().st_size
                else:
                    kind, size = "other", 0
                entries.append(FileEntry(entry.name, kind, size))
        return sorted(entries, key=lambda item: item.name)


def _feed(process: subprocess.Popen[bytes], text: str) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError):  # the command may exit without reading it all
        process.stdin.write(text.encode("utf-8"))
    with contextlib.suppress(OSError):
        process.stdin.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
