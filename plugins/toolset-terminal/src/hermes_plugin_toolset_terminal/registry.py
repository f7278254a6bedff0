"""Background processes per session: a bounded registry, each with a rolling output buffer.

The backend runs the process and keeps its whole log in the environment; the registry keeps
what the model needs: the command, the last ``BUFFER_CHARS`` of output, and where reading
left off, so ``poll`` returns only what is new.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from hermes_sdk.terminal import TerminalBackend

BUFFER_CHARS = 100_000
MAX_PROCESSES = 32


@dataclass
class Tracked:
    id: str
    handle: str
    command: str
    started: float = field(default_factory=time.time)
    offset: int = 0
    buffer: str = ""
    unread: str = ""
    running: bool = True
    exit_code: int | None = None

    def take(self, text: str) -> None:
        self.buffer = (self.buffer + text)[-BUFFER_CHARS:]
        self.unread = (self.unread + text)[-BUFFER_CHARS:]


class Registry:
    def __init__(self) -> None:
        self._by_session: dict[str, dict[str, Tracked]] = {}
        self._lock = threading.Lock()
        self._counter = 0

    def add(self, session_id: str, handle: str, command: str) -> Tracked:
        with self._lock:
            self._counter += 1
            tracked = Tracked(id=f"p{self._counter}", handle=handle, command=command)
            processes = self._by_session.setdefault(session_id, {})
            processes[tracked.id] = tracked
            while len(processes) > MAX_PROCESSES:
                finished = [p for p in processes.values() if not p.running]
                oldest = min(finished or processes.values(), key=lambda p: p.started)
                del processes[oldest.id]
            return tracked

    def get(self, session_id: str, process_id: str) -> Tracked:
        found = self._by_session.get(session_id, {}).get(process_id)
        if found is None:
            known = ", ".join(self._by_session.get(session_id, {})) or "none"
            raise KeyError(f"no background process {process_id!r} (known: {known})")
        return found

    def all(self, session_id: str) -> list[Tracked]:
        return list(self._by_session.get(session_id, {}).values())

    @staticmethod
    def refresh(backend: TerminalBackend, tracked: Tracked) -> Tracked:
        if not tracked.running:  # its log was complete when it was seen to end
            return tracked
        status = backend.read_process(tracked.handle, tracked.offset)
        tracked.offset = status.next_offset
        tracked.take(status.output)
        tracked.running = status.running
        tracked.exit_code = status.exit_code
        return tracked


REGISTRY = Registry()
