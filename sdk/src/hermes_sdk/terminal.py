"""The terminal backend interface: where tools run commands and touch files.

A backend is an environment (this machine, a Docker container, a host over SSH) that runs
shell commands and reads and writes files. Tools never start processes themselves: they ask
the backend of their session (``ToolContext.backend()``), which the kernel builds lazily on
first use, wraps in its safety checks, and reuses for the session.

Methods are blocking; the kernel calls tools in worker threads. A backend implements
:meth:`TerminalBackend.run` and the file methods; background processes come with the base
class, built on ``run`` and the shell, so every backend that can run ``sh`` has them.

The working directory persists between commands the way it does in a terminal: ``cd src``
in one command, and the next one starts in ``src``. :func:`wrap_command` and
:class:`OutputCollector` implement that (and the output caps) once for every backend.
"""

from __future__ import annotations

import abc
import codecs
import contextlib
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "INTERRUPTED_EXIT",
    "OUTPUT_LIMIT",
    "TIMEOUT_EXIT",
    "BackendContext",
    "BackendUnavailable",
    "CommandRefused",
    "CommandResult",
    "FileEntry",
    "OnOutput",
    "OutputCollector",
    "ProcessStatus",
    "TerminalBackend",
    "kill_script",
    "watch",
    "wrap_command",
]

OUTPUT_LIMIT = 8_000_000
"""Characters of stdout (and of stderr) a backend keeps per command; the middle of longer
output is dropped and :attr:`CommandResult.truncated` is set."""

TIMEOUT_EXIT = 124  # what coreutils' timeout(1) returns, so shells and people recognise it
INTERRUPTED_EXIT = 130  # 128 + SIGINT
_KILL_GRACE = 10.0  # after a kill, how long a remote command may take to report its end


class BackendUnavailable(Exception):
    """The environment itself failed (daemon down, host unreachable, auth refused).

    Raise it from any method; the kernel turns it into a "degraded" tool result with
    ``retry_hint`` for the model, and drops the broken backend so the next call builds a
    fresh one. A command that merely fails is a :class:`CommandResult` with its exit code.
    """

    def __init__(self, message: str, retry_hint: str = "retry later, or ask the user") -> None:
        super().__init__(message)
        self.retry_hint = retry_hint


class CommandRefused(Exception):
    """The kernel's safety checks refused a command or a write; ``str()`` says why.

    Tools need not catch it: the kernel reports it to the model as the tool's result.
    """


@dataclass(frozen=True, slots=True)
class CommandResult:
    exit_code: int
    stdout: str
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    interrupted: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.interrupted


@dataclass(frozen=True, slots=True)
class FileEntry:
    name: str
    kind: str  # "file", "dir", "link" or "other"
    size: int = 0


@dataclass(frozen=True, slots=True)
class ProcessStatus:
    """A background process as last seen: ``output`` is what it wrote from ``offset`` on
    (stdout and stderr together); pass ``next_offset`` to read on from there."""

    handle: str
    running: bool
    exit_code: int | None
    output: str
    next_offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BackendContext:
    """What a backend's factory gets: ``BackendSpec.factory(context)``."""

    session_id: str
    home: str
    """HERMES_HOME, for state a backend keeps (known hosts, keys)."""
    cwd: str
    """The directory the user started Hermes in (the workspace a container mounts)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment commands start with: an allow-list the kernel built, never secrets."""
    config: Mapping[str, object] = field(default_factory=dict)
    """The backend's own config.yaml section (``docker:``, ``ssh:`` ...), as written."""


OnOutput = Callable[[str], None]


class TerminalBackend(abc.ABC):
    """One environment for one session (or several, if the user shares it)."""

    name: str = "backend"
    isolated: bool = False
    """True when commands cannot reach the user's files (a container without host mounts):
    dangerous-command prompts are skipped there, the hardline floor never is."""
    on_this_machine: bool = False
    """True when paths are this machine's own (write protection then resolves symlinks)."""
    process_dir: str = "/tmp/.hermes-processes"
    """Where background processes keep their output, inside the environment."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.marker = f"\x1e__hermes_cwd_{uuid.uuid4().hex[:12]}__:"
        self._started: list[str] = []  # background processes started here (handles)

    # --- what a backend implements -----------------------------------------------------

    @abc.abstractmethod
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
        """Run ``command`` in the shell, in ``cwd`` (default: where the last command left
        off), with the backend's environment plus ``env`` for this command only.

        Past ``timeout`` seconds, or when ``cancel`` is set, the command and everything it
        started are killed and the result says so (exit code 124 or 130). ``on_output``
        receives stdout as it arrives.
        """

    @abc.abstractmethod
    def read_file(self, path: str) -> bytes:
        """The bytes of ``path`` (relative paths: from :attr:`cwd`); raises OSError."""

    @abc.abstractmethod
    def write_file(self, path: str, data: bytes) -> None:
        """Create or replace ``path`` with ``data``, creating parent folders; raises OSError."""

    @abc.abstractmethod
    def list_dir(self, path: str) -> list[FileEntry]:
        """The entries of a directory, sorted by name; raises OSError."""

    def close(self) -> None:  # noqa: B027 - optional: most backends have something to free
        """Free what the backend holds (a container, a connection). Called once."""

    # --- paths ---------------------------------------------------------------------------

    def resolve(self, path: str) -> str:
        """``path`` made absolute against :attr:`cwd` (the environment's own paths)."""
        if path.startswith("/"):
            return path
        if path == "~" or path.startswith("~/"):
            return path  # expanded by the environment's shell or SFTP, not here
        return self.cwd.rstrip("/") + "/" + path if path not in ("", ".") else self.cwd

    # --- background processes, through the shell -------------------------------------------

    def start_process(
        self, command: str, *, cwd: str | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        """Start ``command`` in the background; returns its handle."""
        handle = uuid.uuid4().hex[:12]
        base = f"{self.process_dir}/{handle}"
        inner = f"( {command}\n) >{base}.log 2>&1 </dev/null; echo $? >{base}.rc"
        script = (
            f"mkdir -p {self.process_dir} || exit 1\n"
            f"setsid sh -c {shlex.quote(inner)} >/dev/null 2>&1 </dev/null &\n"
            f"echo $! >{base}.pid"
        )
        result = self.run(script, cwd=cwd, env=env, timeout=30)
        if result.exit_code != 0:
            raise OSError(f"could not start the process: {result.stderr.strip() or 'failed'}")
        self.__dict__.setdefault("_started", []).append(handle)
        return handle

    def read_process(self, handle: str, offset: int = 0) -> ProcessStatus:
        """The state of a background process, and its output from ``offset`` (bytes)."""
        base = f"{self.process_dir}/{_checked_handle(handle)}"
        script = (
            f"test -f {base}.pid || {{ echo unknown; exit 0; }}; "
            f"if test -f {base}.rc; then echo exited $(cat {base}.rc); "
            f"elif kill -0 $(cat {base}.pid) 2>/dev/null; then echo running; "
            f"else echo killed; fi; "
            f"tail -c +{offset + 1} {base}.log 2>/dev/null"
        )
        result = self.run(script, cwd="/", timeout=30)
        state, _, output = result.stdout.partition("\n")
        words = state.split()
        if not words or words[0] == "unknown":
            raise KeyError(f"no background process {handle!r}")
        exit_code: int | None = None
        if words[0] == "exited":
            exit_code = int(words[1]) if len(words) > 1 and words[1].lstrip("-").isdigit() else -1
        elif words[0] == "killed":
            exit_code = -9
        return ProcessStatus(
            handle=handle,
            running=words[0] == "running",
            exit_code=exit_code,
            output=output,
            next_offset=offset + len(output.encode("utf-8", "surrogateescape")),
        )

    def kill_process(self, handle: str) -> None:
        """Stop a background process and everything it started."""
        base = f"{self.process_dir}/{_checked_handle(handle)}"
        script = (
            f"test -f {base}.pid || exit 0; pid=$(cat {base}.pid); "
            f"kill -TERM -$pid 2>/dev/null; sleep 0.2; kill -KILL -$pid 2>/dev/null; "
            "exit 0"
        )
        self.run(script, cwd="/", timeout=30)

    def stop_processes(self) -> None:
        """Stop every background process started here that still runs, and everything each
        started; never raises. The kernel calls it before :meth:`close`, so none outlives
        its session or Hermes. One that wrote its exit code has ended: its pid may belong
        to another process by now, so it is left alone."""
        started, self._started = list(self.__dict__.get("_started", ())), []
        if not started:
            return
        # Unquoted, as everywhere here: a process_dir may use the shell ($HOME); handles
        # are checked to be alphanumeric.
        bases = " ".join(f"{self.process_dir}/{_checked_handle(handle)}" for handle in started)

        def signal_all(signal: str) -> str:
            return (
                f"for base in {bases}; do test -f $base.pid && ! test -f $base.rc && "
                f"kill -{signal} -$(cat $base.pid) 2>/dev/null; done"
            )

        script = f"{signal_all('TERM')}; sleep 0.2; {signal_all('KILL')}; exit 0"
        with contextlib.suppress(Exception):  # closing must go on: the environment may be gone
            self.run(script, cwd="/", timeout=30)


def _checked_handle(handle: str) -> str:
    if not handle.isalnum():
        raise KeyError(f"no background process {handle!r}")
    return handle


def wrap_command(
    command: str,
    cwd: str,
    marker: str,
    *,
    env: Mapping[str, str] | None = None,
    pidfile: str | None = None,
    stdin_path: str | None = None,
) -> str:
    """A shell script that runs ``command`` in ``cwd`` (with ``env`` exported) and ends
    its stdout with ``marker`` and the directory it finished in.

    ``eval`` keeps a ``cd`` inside the command in effect for the trailer, and turns a syntax
    error into exit code 2 instead of a script that never runs. ``pidfile`` records the
    shell's pid so that :func:`kill_script` can stop the command from another connection;
    ``stdin_path`` feeds the command from a file already in the environment.
    """
    lines = [f"echo $$ >{shlex.quote(pidfile)}"] if pidfile else []
    lines += [f"export {name}={shlex.quote(value)}" for name, value in (env or {}).items()]
    feed = f" <{shlex.quote(stdin_path)}" if stdin_path else ""
    lines += [
        f"cd {shlex.quote(cwd)} || exit 126",
        f"eval {shlex.quote(command)}{feed}",
        "__hermes_rc=$?",
        f"printf '%s%s' {shlex.quote(marker)} \"$PWD\"",
    ]
    cleanup = [shlex.quote(path) for path in (pidfile, stdin_path) if path]
    if cleanup:
        lines.append(f"rm -f {' '.join(cleanup)}")
    lines.append("exit $__hermes_rc")
    return "\n".join(lines) + "\n"


def kill_script(pidfile: str) -> str:
    """A shell script that kills the process group of the command that wrote ``pidfile``
    (see :func:`wrap_command`), for backends that cannot signal it directly."""
    path = shlex.quote(pidfile)
    return (
        f"pid=$(cat {path} 2>/dev/null) || exit 0; "
        "group=$(cut -d' ' -f5 /proc/$pid/stat 2>/dev/null); "
        'kill -KILL -"${group:-$pid}" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; '
        f"rm -f {path}; exit 0"
    )


def watch(
    finished: threading.Event,
    kill: Callable[[], None],
    *,
    timeout: float | None = None,
    cancel: threading.Event | None = None,
    tick: float = 0.05,
) -> tuple[bool, bool]:
    """Wait for ``finished``; past ``timeout`` seconds or when ``cancel`` is set, call
    ``kill`` once and keep waiting for the command to end. Returns (timed_out, interrupted).
    """
    deadline = time.monotonic() + timeout if timeout else None
    while not finished.wait(tick):
        if deadline is not None and time.monotonic() > deadline:
            kill()
            finished.wait(_KILL_GRACE)
            return True, False
        if cancel is not None and cancel.is_set():
            kill()
            finished.wait(_KILL_GRACE)
            return False, True
    return False, False


class OutputCollector:
    """Collects a command's stdout and stderr: caps each, hides the cwd trailer that
    :func:`wrap_command` appends, and forwards stdout to ``on_output`` as it arrives."""

    _HOLD = 4_400  # the marker plus the longest path: held back until the end

    def __init__(
        self, marker: str, on_output: OnOutput | None = None, limit: int = OUTPUT_LIMIT
    ) -> None:
        self.marker = marker
        self.on_output = on_output
        self.limit = limit
        self._out = _Capped(limit)
        self._err = _Capped(limit)
        self._pending = ""
        self._decoders = (_decoder(), _decoder())

    def stdout(self, data: bytes | str) -> None:
        text = data if isinstance(data, str) else self._decoders[0].decode(data)
        self._pending += text
        # Everything but what may be (the start of) the trailer goes on at once, so that a
        # reader of on_output sees a line as soon as the command writes it.
        ready_end = self._trailer_start()
        if ready_end:
            ready, self._pending = self._pending[:ready_end], self._pending[ready_end:]
            self._out.add(ready)
            if self.on_output is not None:
                self.on_output(ready)

    def _trailer_start(self) -> int:
        """Where the cwd trailer may begin in what is pending (its length when nowhere)."""
        at = self._pending.rfind(self.marker[0])
        if at < 0:
            return len(self._pending)
        tail = self._pending[at:]
        could_be = self.marker.startswith(tail) or tail.startswith(self.marker)
        return at if could_be and len(tail) <= self._HOLD else len(self._pending)

    def stderr(self, data: bytes | str) -> None:
        self._err.add(data if isinstance(data, str) else self._decoders[1].decode(data))

    def result(
        self, exit_code: int, started: float, *, timed_out: bool = False, interrupted: bool = False
    ) -> tuple[CommandResult, str | None]:
        """The command's result (``started``: its ``time.perf_counter()`` at the start),
        and the directory it ended in (None if unknown: it exited early or was killed)."""
        stdout, stderr, cwd, truncated = self.finish()
        if timed_out:
            exit_code = TIMEOUT_EXIT
        elif interrupted:
            exit_code = INTERRUPTED_EXIT
        result = CommandResult(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            seconds=time.perf_counter() - started,
            timed_out=timed_out,
            interrupted=interrupted and not timed_out,
            truncated=truncated,
        )
        return result, cwd

    def finish(self) -> tuple[str, str, str | None, bool]:
        """(stdout, stderr, the directory the command ended in or None, truncated)."""
        self._pending += self._decoders[0].decode(b"", final=True)
        self._err.add(self._decoders[1].decode(b"", final=True))
        cwd: str | None = None
        at = self._pending.rfind(self.marker)
        if at >= 0:
            cwd = self._pending[at + len(self.marker) :] or None
            self._pending = self._pending[:at]
        self._out.add(self._pending)
        if self.on_output is not None and self._pending:
            self.on_output(self._pending)
        self._pending = ""
        return self._out.text(), self._err.text(), cwd, self._out.cut or self._err.cut


def _decoder() -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


class _Capped:
    """Keeps the first and last half of ``limit`` characters; counts what it dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_size = 0
        self.tail = ""
        self.dropped = 0

    @property
    def cut(self) -> bool:
        return self.dropped > 0

    def add(self, text: str) -> None:
        if not text:
            return
        half = self.limit // 2
        if self.head_size < half:
            take = text[: half - self.head_size]
            self.head.append(take)
            self.head_size += len(take)
            text = text[len(take) :]
        if text:
            self.tail += text
            if len(self.tail) > half:
                self.dropped += len(self.tail) - half
                self.tail = self.tail[-half:]

    def text(self) -> str:
        head = "".join(self.head)
        if not self.dropped:
            return head + self.tail
        return f"{head}\n[… {self.dropped:,} characters of output dropped …]\n{self.tail}"
