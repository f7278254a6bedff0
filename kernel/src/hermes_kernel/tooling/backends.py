"""Terminal backends per session: built lazily, guarded, dropped when broken.

The pool builds a session's backend on the first tool call that needs it (in that tool's
worker thread) and reuses it for the session. Every backend is handed to tools wrapped in a
:class:`GuardedBackend`, so the approval check and write protection apply whichever tool
(ours or a plugin's) runs the command. A backend that reports an infrastructure failure
(BackendUnavailable) is dropped, and the next call builds a fresh one.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from hermes_kernel.log import ACTIVITY
from hermes_kernel.safety.approval import Approvals
from hermes_kernel.safety.paths import read_refusal, write_refusal
from hermes_sdk import BackendSpec
from hermes_sdk.terminal import (
    BackendContext,
    BackendUnavailable,
    CommandRefused,
    CommandResult,
    FileEntry,
    ProcessStatus,
    TerminalBackend,
)

__all__ = ["BackendPool", "GuardedBackend"]

log = logging.getLogger("hermes.backends")
approved = logging.getLogger(f"{ACTIVITY}.approvals")
"""Commands run on an approval: a record of what the agent did, for the log files (the
chat says the decision already; on its screen a line here would cut into the prompt)."""
T = TypeVar("T")
SHARED = "*"


class GuardedBackend(TerminalBackend):
    """A backend with the kernel's checks in front of every command and write."""

    def __init__(self, inner: TerminalBackend, pool: BackendPool, session_id: str) -> None:
        # No super().__init__: the working directory and marker are the inner backend's.
        self.inner = inner
        self.pool = pool
        self.session_id = session_id
        self.name = inner.name
        self.isolated = inner.isolated
        self.on_this_machine = inner.on_this_machine

    @property
    def cwd(self) -> str:
        return self.inner.cwd

    @cwd.setter
    def cwd(self, value: str) -> None:
        self.inner.cwd = value

    def _guarded(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except BackendUnavailable:
            self.pool.drop(self.session_id, self.inner)
            raise

    def _approve(self, command: str) -> None:
        note = self.pool.approvals.check(
            command, backend=self.name, session_id=self.session_id, isolated=self.isolated
        )
        if note:
            approved.info("%s: %s", note, command)

    def run(self, command: str, **options: Any) -> CommandResult:
        self._approve(command)
        return self._guarded(lambda: self.inner.run(command, **options))

    def start_process(self, command: str, **options: Any) -> str:
        self._approve(command)
        return self._guarded(lambda: self.inner.start_process(command, **options))

    def read_process(self, handle: str, offset: int = 0) -> ProcessStatus:
        return self._guarded(lambda: self.inner.read_process(handle, offset))

    def kill_process(self, handle: str) -> None:
        self._guarded(lambda: self.inner.kill_process(handle))

    def stop_processes(self) -> None:
        self.inner.stop_processes()

    def resolve(self, path: str) -> str:
        return self.inner.resolve(path)

    def read_file(self, path: str) -> bytes:
        refusal = read_refusal(
            self.inner.resolve(path), local=self.on_this_machine, hermes_home=self.pool.home
        )
        if refusal is not None:
            raise CommandRefused(f"refused: {refusal}; reading it is not allowed")
        return self._guarded(lambda: self.inner.read_file(path))

    def write_file(self, path: str, data: bytes) -> None:
        resolved = self.inner.resolve(path)
        refusal = write_refusal(
            resolved,
            local=self.on_this_machine,
            hermes_home=self.pool.home,
            safe_root=self.pool.safe_root,
        )
        if refusal is not None:
            raise CommandRefused(f"refused: {refusal}; writing it is not allowed")
        # The terminal's rules for a write to this path (a system file, a startup file, a
        # service unit ...): asked about the same way, whichever tool writes.
        note = self.pool.approvals.check_write(
            resolved, backend=self.name, session_id=self.session_id, isolated=self.isolated
        )
        if note:
            approved.info("%s: write_file %s", note, resolved)
        self._guarded(lambda: self.inner.write_file(path, data))

    def list_dir(self, path: str) -> list[FileEntry]:
        return self._guarded(lambda: self.inner.list_dir(path))

    def close(self) -> None:
        self.pool.close(self.session_id)


class BackendPool:
    """The backends of one Hermes process, one per session (or one shared by all)."""

    def __init__(
        self,
        name: str,
        find: Callable[[str], BackendSpec | None],
        *,
        home: str,
        cwd: str,
        env: Mapping[str, str],
        config: Mapping[str, object],
        approvals: Approvals,
        installed: Callable[[], list[str]] = list,
        share: bool = False,
        safe_root: str | None = None,
    ) -> None:
        self.name = name
        self.find = find
        self.home = home
        self.cwd = cwd
        self.env = dict(env)
        self.config = dict(config)
        self.approvals = approvals
        self.installed = installed
        self.share = share
        self.safe_root = safe_root
        self._backends: dict[str, TerminalBackend] = {}
        self._lock = threading.Lock()

    def _key(self, session_id: str) -> str:
        return SHARED if self.share else session_id

    def get(self, session_id: str) -> GuardedBackend:
        """The session's backend, built now if it is the first call (blocking)."""
        key = self._key(session_id)
        with self._lock:
            backend = self._backends.get(key)
            if backend is None:
                backend = self._build(session_id)
                self._backends[key] = backend
        return GuardedBackend(backend, self, session_id)

    def _build(self, session_id: str) -> TerminalBackend:
        spec = self.find(self.name)
        if spec is None:
            known = ", ".join(self.installed()) or "none"
            raise BackendUnavailable(
                f"no terminal backend {self.name!r} is installed (installed: {known})",
                f"ask the user to install hermes-plugin-backend-{self.name} or to set "
                "agent.backend",
            )
        context = BackendContext(
            session_id=session_id, home=self.home, cwd=self.cwd, env=self.env, config=self.config
        )
        try:
            backend = spec.build(context)
        except BackendUnavailable:
            raise
        except Exception as exc:
            raise BackendUnavailable(
                f"the {self.name} backend failed to start: {type(exc).__name__}: {exc}",
                "tell the user; check `hermes doctor` and the backend's config section",
            ) from exc
        if not isinstance(backend, TerminalBackend):
            raise BackendUnavailable(
                f"the {self.name} backend's factory returned {type(backend).__name__}, "
                "not a TerminalBackend",
                "tell the user: the backend plugin is broken",
            )
        log.debug("started the %s backend for session %s", self.name, session_id)  # routine
        return backend

    def drop(self, session_id: str, backend: TerminalBackend) -> None:
        """Forget a broken backend (only if it is still the one in use)."""
        key = self._key(session_id)
        with self._lock:
            if self._backends.get(key) is backend:
                del self._backends[key]
            else:
                return
        with contextlib.suppress(Exception):  # it is broken already; closing is best effort
            backend.stop_processes()
            backend.close()

    def close(self, session_id: str) -> None:
        """Close a session's backend (a shared one stays until :meth:`close_all`)."""
        if self.share:
            return
        with self._lock:
            backend = self._backends.pop(session_id, None)
        if backend is not None:
            _close(backend)

    def close_all(self) -> None:
        with self._lock:
            backends, self._backends = list(self._backends.values()), {}
        for backend in backends:
            _close(backend)


def _close(backend: TerminalBackend) -> None:
    backend.stop_processes()  # background processes end with their environment
    try:
        backend.close()
    except Exception as exc:  # noqa: BLE001 - closing must never fail an exit
        log.warning("closing the %s backend failed: %s", backend.name, exc)
