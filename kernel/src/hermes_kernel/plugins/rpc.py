"""What the agent and a plugin host process (``plugins.isolated``) say to each other.

Every message is one of the frozen dataclasses below, pickled and framed by
:mod:`multiprocessing.connection` over a pair of pipes of the host's own (never its stdout,
which a plugin may print to). Pickle is safe here because both ends are the same program
in the same environment, run by the same user: the host is a fault boundary, not a trust
boundary.

The agent asks (:class:`Load`, :class:`CallHook`, :class:`CallTool`, :class:`Cancel`) and
the host answers each request with one :class:`Reply` carrying its id. While a tool runs,
the host may send :class:`Progress` lines and ask for what its ``ToolContext`` offers
(:class:`Callback`: the terminal backend, a question to the user, a secret ...), which the
agent answers with :class:`Answer`.
"""

from __future__ import annotations

import contextlib
import pickle
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import Kind, Spec

__all__ = [
    "CANCEL",
    "PROXIED_KINDS",
    "Answer",
    "CallHook",
    "CallTool",
    "Callback",
    "Cancel",
    "Channel",
    "ContextFields",
    "ImportedModel",
    "Load",
    "Loaded",
    "Progress",
    "RemoteFailure",
    "Reply",
    "failure_of",
    "raise_failure",
    "remote_handler",
]

PROXIED_KINDS = frozenset({Kind.TOOL, Kind.TOOLSET, Kind.CONFIG, Kind.REVIEW, Kind.HOOK})
"""What an isolated plugin may provide (a review is plain data); the rest (a provider, a
backend ...) must run in the agent's process."""

CANCEL = "<the tool call's cancel event>"
"""Stands for ``ToolContext.cancel`` in a backend call's arguments (an Event cannot cross)."""


@dataclass(frozen=True)
class Load:
    """Load the plugin (the host's first request, always id 0)."""

    record: PluginRecord
    timeout: float
    id: int = 0


@dataclass(frozen=True)
class Loaded:
    """What the plugin provides, as the agent will see it; ``refused`` names the specs that
    cannot be proxied (a provider, a backend ...), and ``error`` a failed load."""

    seconds: float
    specs: list[Spec] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    traceback: str | None = None
    id: int = 0


@dataclass(frozen=True)
class CallHook:
    id: int
    hook: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class ContextFields:
    """A ``ToolContext`` without its callables (nor what other plugins provide: their specs
    hold callables too); ``offers`` names the callbacks that exist ("backend", "ask",
    "search", "complete", "secret")."""

    session_id: str
    home: str
    cwd: str
    source: str
    user_scope: str | None
    config: Mapping[str, Any]
    offers: frozenset[str]


@dataclass(frozen=True)
class CallTool:
    id: int
    tool: str
    arguments: dict[str, Any]
    context: ContextFields | None = None


@dataclass(frozen=True)
class Cancel:
    """The user stopped the turn: set the cancel event of tool call ``id``."""

    id: int


@dataclass(frozen=True)
class Reply:
    """The end of request ``id``: its value, or the exception it raised (``error``, when it
    pickles) and that exception's one-line text."""

    id: int
    value: Any = None
    error: BaseException | None = None
    error_text: str | None = None


@dataclass(frozen=True)
class Progress:
    id: int
    text: str


@dataclass(frozen=True)
class Callback:
    """From the host: call ``name`` ("ask", "backend.run" ...) on the context of tool call
    ``call``; answered by an :class:`Answer` with the same ``id``."""

    id: int
    call: int
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    id: int
    value: Any = None
    error: BaseException | None = None
    error_text: str | None = None


class RemoteFailure(Exception):
    """An exception from the other side that could not be sent as itself."""


def failure_of(exc: BaseException) -> tuple[BaseException | None, str]:
    """``exc`` if it survives a round trip through pickle, and its one-line text."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any exception may refuse to pickle; its text still goes
        return None, text
    return (exc if isinstance(exc, Exception) else None), text


def raise_failure(error: BaseException | None, text: str | None) -> None:
    if error is not None:
        raise error
    raise RemoteFailure(text or "failed in the plugin's process")


def remote_handler(**arguments: Any) -> Any:
    """Stands for a tool's handler on its way to the agent, which puts a proxy in its place."""
    raise RuntimeError("an isolated tool's handler runs in its plugin's host process")


@dataclass(frozen=True)
class ImportedModel:
    """A config section's model, imported by name only when the section is validated."""

    module: str
    qualname: str

    def __call__(self) -> type[Any]:
        import importlib

        found: Any = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            found = getattr(found, part)
        model: type[Any] = found() if not isinstance(found, type) else found
        return model


class Channel:
    """One end of the pipes: whole messages in, whole messages out (``send`` from any
    thread)."""

    def __init__(self, incoming: Connection, outgoing: Connection) -> None:
        self._incoming = incoming
        self._outgoing = outgoing
        self._lock = threading.Lock()

    @classmethod
    def of_fds(cls, read_fd: int, write_fd: int) -> Channel:
        return cls(Connection(read_fd, writable=False), Connection(write_fd, readable=False))

    def send(self, message: object) -> None:
        """Raises OSError (or ValueError when closed) if the other end is gone."""
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._outgoing.send_bytes(data)

    def recv(self) -> object:
        """The next message; raises EOFError when the other end closed."""
        message: object = pickle.loads(self._incoming.recv_bytes())
        return message

    def close(self) -> None:
        for connection in (self._incoming, self._outgoing):
            with contextlib.suppress(OSError):
                connection.close()
