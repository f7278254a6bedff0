"""Run commands on another host over one SSH connection (paramiko), files over SFTP.

The connection is opened when the backend is built and reused for every command (each
command is a new channel on it); a keepalive holds it through idle minutes, and a dropped
connection is reopened once before the failure is reported. Host keys are checked against
known_hosts by default.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import stat
import threading
import time
import uuid
from collections.abc import Iterator, Mapping

import paramiko

from hermes_plugin_backend_ssh.config import SSHConfig
from hermes_sdk.terminal import (
    BackendUnavailable,
    CommandResult,
    FileEntry,
    OnOutput,
    OutputCollector,
    TerminalBackend,
    kill_script,
    wrap_command,
)

_TICK = 0.05
_READ = 65536
_KILL_GRACE = 10.0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class SSHBackend(TerminalBackend):
    name = "ssh"
    process_dir = "$HOME/.cache/hermes-processes"

    def __init__(self, config: SSHConfig) -> None:
        if not config.host:
            raise BackendUnavailable(
                "ssh: no host is configured", "ask the user to set ssh.host in config.yaml"
            )
        self.config = config
        self.client = self._connect()
        self._sftp: paramiko.SFTPClient | None = None
        super().__init__(config.workspace or self.sftp().normalize("."))

    # --- the connection ----------------------------------------------------------------------

    def _where(self) -> str:
        user = f"{self.config.user}@" if self.config.user else ""
        return f"{user}{self.config.host}:{self.config.port}"

    def _connect(self) -> paramiko.SSHClient:
        config = self.config
        client = paramiko.SSHClient()
        known_hosts = os.path.expanduser(config.known_hosts)
        if os.path.exists(known_hosts):
            client.load_host_keys(known_hosts)
        client.set_missing_host_key_policy(
            paramiko.RejectPolicy() if config.check_host_key else paramiko.AutoAddPolicy()
        )
        key_file = os.path.expanduser(config.key_file) if config.key_file else None
        try:
            client.connect(
                config.host,
                port=config.port,
                username=config.user,
                key_filename=key_file,
                allow_agent=config.use_agent,
                look_for_keys=key_file is None,
                timeout=config.connect_timeout_seconds,
                banner_timeout=config.connect_timeout_seconds,
                auth_timeout=config.connect_timeout_seconds,
            )
        except paramiko.AuthenticationException as exc:
            raise BackendUnavailable(
                f"ssh: {self._where()} refused our key ({_one_line(exc)})",
                "ask the user to check ssh.user and ssh.key_file (or the SSH agent)",
            ) from exc
        except paramiko.SSHException as exc:
            hint = "check that the host is up and reachable, then retry"
            if "known_hosts" in str(exc):
                hint = (
                    "ask the user to verify the host key and add it: "
                    f"ssh-keyscan -p {config.port} {config.host} >> {config.known_hosts}"
                )
            raise BackendUnavailable(f"ssh: {self._where()}: {_one_line(exc)}", hint) from exc
        except (OSError, EOFError) as exc:
            raise BackendUnavailable(
                f"ssh: cannot reach {self._where()} ({_one_line(exc)})",
                "check that the host is up and reachable, then retry",
            ) from exc
        transport = client.get_transport()
        if transport is not None and config.keepalive_seconds:
            transport.set_keepalive(config.keepalive_seconds)
        return client

    def _channel(self) -> paramiko.Channel:
        for attempt in (1, 2):
            transport = self.client.get_transport()
            try:
                if transport is None or not transport.is_active():
                    raise paramiko.SSHException("the connection is closed")
                return transport.open_session(timeout=self.config.connect_timeout_seconds)
            except (paramiko.SSHException, OSError, EOFError) as exc:
                if attempt == 2:
                    raise BackendUnavailable(
                        f"ssh: lost the connection to {self._where()} ({_one_line(exc)})",
                        "retry: the connection will be opened again",
                    ) from exc
                self._reconnect()
        raise AssertionError("unreachable")

    def _reconnect(self) -> None:
        with contextlib.suppress(Exception):  # the old connection is already broken
            self.client.close()
        self._sftp = None
        self.client = self._connect()

    def sftp(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            try:
                self._sftp = self.client.open_sftp()
            except (paramiko.SSHException, OSError, EOFError) as exc:
                raise BackendUnavailable(
                    f"ssh: SFTP is not available on {self._where()} ({_one_line(exc)})",
                    "ask the user to enable the sftp subsystem on the host",
                ) from exc
        return self._sftp

    # --- commands --------------------------------------------------------------------------

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
        pidfile = f"/tmp/.hermes-run-{uuid.uuid4().hex[:12]}"
        directory = self.resolve(cwd) if cwd is not None else self.cwd
        script = wrap_command(command, directory, self.marker, env=env, pidfile=pidfile)
        channel = self._channel()
        try:
            channel.exec_command(shlex.join([self.config.shell, "-c", script]))
            if stdin is not None:
                channel.sendall(stdin.encode("utf-8"))
            channel.shutdown_write()
            collector = OutputCollector(self.marker, on_output)
            timed_out, interrupted = self._pump(channel, collector, pidfile, timeout, cancel)
            # The exit status may come just after the end of output; a killed command's
            # channel may close without one.
            exit_code = channel.exit_status if channel.status_event.wait(_KILL_GRACE) else -1
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise BackendUnavailable(
                f"ssh: the connection to {self._where()} failed mid-command ({_one_line(exc)})",
                "retry: the connection will be opened again",
            ) from exc
        finally:
            channel.close()
        result, new_cwd = collector.result(
            exit_code, started, timed_out=timed_out, interrupted=interrupted
        )
        if new_cwd is not None and cwd is None:
            self.cwd = new_cwd
        return result

    def _pump(
        self,
        channel: paramiko.Channel,
        collector: OutputCollector,
        pidfile: str,
        timeout: float | None,
        cancel: threading.Event | None,
    ) -> tuple[bool, bool]:
        deadline = time.monotonic() + timeout if timeout else None
        timed_out = interrupted = False
        killed_at: float | None = None
        while True:
            if channel.recv_ready():
                collector.stdout(channel.recv(_READ))
            elif channel.recv_stderr_ready():
                collector.stderr(channel.recv_stderr(_READ))
            elif channel.eof_received or channel.closed:
                return timed_out, interrupted
            else:
                select.select([channel], [], [], _TICK)
            # Checked after every read too: a command that prints without pause would
            # otherwise never let its deadline or a stop be seen.
            now = time.monotonic()
            if killed_at is None:
                timed_out = deadline is not None and now > deadline
                interrupted = cancel is not None and cancel.is_set() and not timed_out
                if timed_out or interrupted:
                    killed_at = now
                    self._kill(pidfile)
            elif now - killed_at > _KILL_GRACE:
                return timed_out, interrupted

    def _kill(self, pidfile: str) -> None:
        with contextlib.suppress(BackendUnavailable, paramiko.SSHException, OSError, EOFError):
            channel = self._channel()
            try:
                channel.exec_command(kill_script(pidfile))
                channel.recv_exit_status()
            finally:
                channel.close()

    # --- files -----------------------------------------------------------------------------

    def _remote(self, path: str) -> str:
        resolved = self.resolve(path)
        if resolved == "~":
            return "."
        if resolved.startswith("~/"):
            return resolved[2:]  # SFTP paths without a leading / start at the home
        return resolved

    @contextlib.contextmanager
    def _files(self) -> Iterator[paramiko.SFTPClient]:
        """SFTP, with a broken connection reported as BackendUnavailable (a missing file
        stays an OSError, as the interface says)."""
        try:
            yield self.sftp()
        except (paramiko.SSHException, EOFError) as exc:
            self._sftp = None
            raise BackendUnavailable(
                f"ssh: file transfer with {self._where()} failed ({_one_line(exc)})",
                "retry: the connection will be opened again",
            ) from exc

    def read_file(self, path: str) -> bytes:
        with self._files() as sftp, sftp.open(self._remote(path), "rb") as handle:
            handle.prefetch()
            return bytes(handle.read())

    def write_file(self, path: str, data: bytes) -> None:
        target = self._remote(path)
        partial = f"{target}.hermes-partial"
        with self._files() as sftp:
            self._make_parents(sftp, target)
            with sftp.open(partial, "wb") as handle:
                handle.set_pipelined(True)
                handle.write(data)
            sftp.posix_rename(partial, target)

    def _make_parents(self, sftp: paramiko.SFTPClient, target: str) -> None:
        parent = target.rsplit("/", 1)[0] if "/" in target else ""
        missing: list[str] = []
        while parent and parent != "/":
            try:
                sftp.stat(parent)
                break
            except FileNotFoundError:
                missing.append(parent)
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
        for folder in reversed(missing):
            sftp.mkdir(folder)

    def list_dir(self, path: str) -> list[FileEntry]:
        entries = []
        with self._files() as sftp:
            listing = sftp.listdir_attr(self._remote(path))
        for attributes in listing:
            mode = attributes.st_mode or 0
            if stat.S_ISLNK(mode):
                kind = "link"
            elif stat.S_ISDIR(mode):
                kind = "dir"
            elif stat.S_ISREG(mode):
                kind = "file"
            else:
                kind = "other"
            size = attributes.st_size or 0 if kind == "file" else 0
            entries.append(FileEntry(attributes.filename, kind, size))
        return sorted(entries, key=lambda item: item.name)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken connection must not fail
            if self._sftp is not None:
                self._sftp.close()
        with contextlib.suppress(Exception):
            self.client.close()
