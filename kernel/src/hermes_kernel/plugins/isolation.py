"""Plugins listed in ``plugins.isolated``: each runs in a host process of its own.

The agent sees such a plugin like any other: its tools are :class:`~hermes_sdk.ToolSpec`
objects whose handlers send the call to the host, and its hooks are implementations on a
stand-in object registered with the plugin manager, so deadlines and error handling are the
ones every plugin gets (:mod:`dispatch`, the tool runner). What only runs in the agent's
process (a provider, a terminal backend, a platform, a memory provider ...) is refused at
load, with the reason.

When the host dies (``os._exit``, a segfault, the OOM killer), the calls in flight fail
with :class:`PluginCrashed` ("the plugin's process crashed: killed by SIGSEGV"), and the
next call starts a new host after a backoff; after ``MAX_CRASHES`` crashes the plugin is
disabled for the rest of the process, said in one line. The host runs as the same user with
the same files: this contains crashes and hangs; it is not a security sandbox.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any

from hermes_kernel.plugins.records import LoadOutcome, PluginRecord
from hermes_kernel.plugins.rpc import (
    CANCEL,
    PROXIED_KINDS,
    Answer,
    Callback,
    CallHook,
    CallTool,
    Cancel,
    Channel,
    ContextFields,
    Load,
    Loaded,
    Progress,
    Reply,
    failure_of,
    raise_failure,
)
from hermes_kernel.plugins.workers import plugin_workers
from hermes_sdk import ToolSpec, hookimpl
from hermes_sdk.tooling import ToolContext, progress_reporter

log = logging.getLogger("hermes.plugins")

MAX_CRASHES = 3
"""Crashes after which an isolated plugin is disabled for the rest of the process."""
BACKOFF_SECONDS = (0.5, 2.0, 8.0)
"""How long after its first, second ... crash a host may start again."""
CANCEL_POLL_SECONDS = 0.1


class PluginCrashed(RuntimeError):
    """The plugin's host process died while a call was in flight, or cannot start."""


class PluginDisabled(RuntimeError):
    """The plugin crashed too often and is off for the rest of this process."""


def _exit_description(code: int | None) -> str:
    if code is None:
        return "its pipe closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):  # replaced by a capture (tests, a service)
        return 2


class _HostProcess:
    """One running host: its process, its pipes, and the requests awaiting a reply."""

    def __init__(self, name: str, answer: Callable[[Callback], None]) -> None:
        self.name = name
        self._answer = answer
        to_host_read, to_host_write = os.pipe()
        from_host_read, from_host_write = os.pipe()
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "hermes_kernel.plugins.plugin_process",
                    str(to_host_read),
                    str(from_host_write),
                ],
                pass_fds=(to_host_read, from_host_write),
                stdin=subprocess.DEVNULL,
                stdout=_stderr_fd(),  # a plugin's prints never mix with a reply
                start_new_session=True,  # Ctrl+C is the agent's to handle, not the host's
            )
        finally:
            os.close(to_host_read)
            os.close(from_host_write)
        self.channel = Channel.of_fds(from_host_read, to_host_write)
        self.pid = self.process.pid
        self._pending: dict[int, Future[Any]] = {}
        self._progress: dict[int, Callable[[str], None]] = {}
        self._lock = threading.Lock()
        self.exit: str | None = None
        """Why the host ended, once it has."""
        self._reader = threading.Thread(target=self._read, name=f"hermes-host-{name}", daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self.exit is None

    def request(self, message: Any, progress: Callable[[str], None] | None = None) -> Future[Any]:
        """Send a request; its future gets the :class:`Reply`, or PluginCrashed."""
        future: Future[Any] = Future()
        with self._lock:
            if self.exit is not None:
                future.set_exception(PluginCrashed(self._crash_text()))
                return future
            self._pending[message.id] = future
            if progress is not None:
                self._progress[message.id] = progress
        with contextlib.suppress(OSError, ValueError):  # the reader sees the end, fails it
            self.channel.send(message)
        return future

    def send(self, message: object) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.channel.send(message)

    def _read(self) -> None:
        while True:
            try:
                message = self.channel.recv()
            except (EOFError, OSError):
                break
            except Exception as exc:  # noqa: BLE001 - a message that does not unpickle
                log.warning("plugin %r: unreadable message from its host (%s)", self.name, exc)
                continue
            if isinstance(message, Reply | Loaded):
                with self._lock:
                    future = self._pending.pop(message.id, None)
                    self._progress.pop(message.id, None)
                if future is not None:
                    future.set_result(message)
            elif isinstance(message, Progress):
                show = self._progress.get(message.id)
                if show is not None:
                    show(message.text)
            elif isinstance(message, Callback):
                plugin_workers.submit(functools.partial(self._answer, message))
        self._ended()

    def _ended(self) -> None:
        try:
            code: int | None = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        with self._lock:
            self.exit = _exit_description(code)
            pending = list(self._pending.values())
            self._pending.clear()
            self._progress.clear()
        self.channel.close()
        for future in pending:
            future.set_exception(PluginCrashed(self._crash_text()))

    def _crash_text(self) -> str:
        return f"the plugin's process crashed ({self.exit}); it restarts for the next call"

    def stop(self) -> None:
        self.channel.close()  # the host leaves when its pipe closes
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()


class IsolatedPlugin:
    """One isolated plugin: started on first use, restarted after a crash."""

    def __init__(
        self, record: PluginRecord, load_timeout: float, on_disabled: Callable[[str], None]
    ) -> None:
        self.record = record
        self.load_timeout = load_timeout
        self._on_disabled = on_disabled
        self._host: _HostProcess | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._contexts: dict[int, ToolContext] = {}
        self.crashes = 0
        self.restarts = 0
        self.disabled: str | None = None
        self._not_before = 0.0
        self.last_exit: str | None = None

    @property
    def state(self) -> str:
        """One phrase for ``hermes plugins list``."""
        if self.disabled is not None:
            return f"disabled: {self.disabled}"
        host = self._host
        if host is None:
            return "host not started"
        if host.alive:
            extra = f", {self.restarts} restarts" if self.restarts else ""
            return f"host running (pid {host.pid}{extra})"
        return f"host crashed ({host.exit}); restarts on the next call"

    @property
    def summary(self) -> str:
        """What became of the host over the process, for the next ``hermes plugins list``."""
        if self.disabled is not None:
            return f"isolated; disabled at run time: {self.disabled}"
        if self.crashes:
            times = "1 time" if self.crashes == 1 else f"{self.crashes} times"
            return f"isolated; its host crashed {times} (last: {self.last_exit})"
        return "isolated; its host ran without a crash"

    # --- loading ------------------------------------------------------------------------

    def load(self) -> LoadOutcome:
        """Start the host and load the plugin there; the outcome holds stand-ins for its
        tools and hooks, or the reason it cannot run isolated."""
        declared = sorted(
            f"{kind.value} {name!r}"
            for kind, name in self.record.declares
            if kind not in PROXIED_KINDS
        )
        if declared:  # known from its manifest: no host needs to start to say so
            return LoadOutcome(
                self.record.name, ok=False, seconds=0.0, error=self._refusal(declared)
            )
        started = time.perf_counter()
        try:
            loaded = self._start()
        except PluginCrashed as exc:
            return LoadOutcome(self.record.name, ok=False, seconds=0.0, error=str(exc))
        except OSError as exc:  # no process could start (too many open files ...)
            error = f"its host process could not start: {exc.strerror or exc}"
            return LoadOutcome(self.record.name, ok=False, seconds=0.0, error=error)
        seconds = time.perf_counter() - started
        if loaded.error is not None:
            self.stop()
            return LoadOutcome(
                self.record.name,
                ok=False,
                seconds=seconds,
                error=loaded.error,
                traceback=loaded.traceback,
            )
        if loaded.refused:
            self.stop()
            error = self._refusal(loaded.refused)
            return LoadOutcome(self.record.name, ok=False, seconds=seconds, error=error)
        outcome = LoadOutcome(self.record.name, ok=True, seconds=seconds)
        outcome.specs = [
            replace(spec, handler=self._tool_handler(spec)) if isinstance(spec, ToolSpec) else spec
            for spec in loaded.specs
        ]
        outcome.plugin = _stand_in(self, loaded.hooks)
        return outcome

    def _refusal(self, refused: list[str]) -> str:
        return (
            f"it provides {', '.join(refused)}, which cannot run in a plugin host of its own "
            "(only tools, hooks and config sections can); remove "
            f"{self.record.name!r} from plugins.isolated"
        )

    def _start(self) -> Loaded:
        """A new host with the plugin loaded (the caller holds no lock); raises PluginCrashed."""
        host = _HostProcess(self.record.name, self._callback)
        future = host.request(Load(self.record, self.load_timeout))
        try:
            loaded: Loaded = future.result(timeout=self.load_timeout + 10)
        except FutureTimeout:
            host.stop()
            raise PluginCrashed(
                f"its host process did not load it within {self.load_timeout:g} s"
            ) from None
        self._host = host
        return loaded

    def _running_host(self) -> _HostProcess:
        """The live host, restarted (after the backoff) if it crashed."""
        with self._lock:
            if self.disabled is not None:
                raise PluginDisabled(
                    f"plugin {self.record.name!r} is disabled for this process: {self.disabled}"
                )
            host = self._host
            if host is not None and host.alive:
                return host
            if host is not None:
                self._crashed(host)
                if self.disabled is not None:
                    raise PluginDisabled(
                        f"plugin {self.record.name!r} is disabled for this process: {self.disabled}"
                    )
            time.sleep(max(0.0, self._not_before - time.monotonic()))
            loaded = self._start()
            if loaded.error is not None:
                raise PluginCrashed(f"its host restarted but could not load it: {loaded.error}")
            self.restarts += 1
            log.info("plugin %r: its host process restarted", self.record.name)
            assert self._host is not None
            return self._host

    def _crashed(self, host: _HostProcess) -> None:
        """Count the crash of the current host (the lock is held)."""
        self._host = None
        self.crashes += 1
        self.last_exit = host.exit
        if self.crashes >= MAX_CRASHES:
            self.disabled = f"its process crashed {self.crashes} times (last: {host.exit})"
            self._on_disabled(self.disabled)
            return
        backoff = BACKOFF_SECONDS[min(self.crashes, len(BACKOFF_SECONDS)) - 1]
        self._not_before = time.monotonic() + backoff

    def stop(self) -> None:
        host, self._host = self._host, None
        if host is not None:
            host.stop()

    # --- calls --------------------------------------------------------------------------

    def call_hook(self, hook: str, kwargs: dict[str, Any]) -> Any:
        """One hook call in the host (blocks the calling worker thread)."""
        host = self._running_host()
        reply = host.request(CallHook(next(self._ids), hook, kwargs)).result()
        self._note_crash(host)
        return _value(reply)

    def call_tool(self, tool: str, arguments: dict[str, Any], context: ToolContext | None) -> Any:
        host = self._running_host()
        number = next(self._ids)
        fields = None
        if context is not None:
            self._contexts[number] = context
            fields = _fields_of(context)
        try:
            future = host.request(
                CallTool(number, tool, arguments, fields), progress=progress_reporter()
            )
            cancelled = False
            while True:
                try:
                    reply = future.result(timeout=CANCEL_POLL_SECONDS)
                    break
                except FutureTimeout:
                    if not cancelled and context is not None and context.cancel.is_set():
                        cancelled = True
                        host.send(Cancel(number))
                except PluginCrashed:
                    self._note_crash(host)
                    raise
        finally:
            self._contexts.pop(number, None)
        return _value(reply)

    def _note_crash(self, host: _HostProcess) -> None:
        if not host.alive:
            with self._lock:
                if self._host is host:
                    self._crashed(host)

    def _tool_handler(self, spec: ToolSpec) -> Callable[..., Any]:
        name = spec.name

        def handler(**arguments: Any) -> Any:
            context = arguments.pop("context", None)
            return self.call_tool(name, arguments, context)

        handler.__name__ = name
        return handler

    def _callback(self, callback: Callback) -> None:
        """Answer what a running tool asks of its context (in a worker thread)."""
        host = self._host
        if host is None:
            return
        try:
            value = self._serve_callback(callback)
            answer = Answer(callback.id, value=value)
        except Exception as exc:  # noqa: BLE001 - goes back to the tool, which decides
            error, text = failure_of(exc)
            answer = Answer(callback.id, error=error, error_text=text)
        try:
            host.channel.send(answer)
        except (OSError, ValueError):
            pass
        except Exception as exc:  # noqa: BLE001 - a value that does not pickle
            error, text = failure_of(exc)
            host.send(Answer(callback.id, error=error, error_text=text))

    def _serve_callback(self, callback: Callback) -> Any:
        context = self._contexts.get(callback.call)
        if context is None:
            raise RuntimeError("the tool call this belongs to has ended")
        name, args, kwargs = callback.name, callback.args, dict(callback.kwargs)
        if name == "ask":
            return context.ask_user(*args)
        if name == "search":
            return context.search_history(*args)
        if name == "complete":
            return context.ask_model(*args)
        if name == "secret":
            return context.secret(*args)
        if name == "send":
            return context.send_file(*args)
        if name == "look":
            return context.ask_model_about_images(*args)
        backend = context.backend()
        if name == "backend":
            return {
                "name": backend.name,
                "isolated": backend.isolated,
                "on_this_machine": backend.on_this_machine,
                "process_dir": backend.process_dir,
                "cwd": backend.cwd,
            }
        method = name.removeprefix("backend.")
        if not name.startswith("backend.") or method.startswith("_"):
            raise RuntimeError(f"no such context call: {name}")
        if kwargs.get("cancel") == CANCEL:
            kwargs["cancel"] = context.cancel
        return getattr(backend, method)(*args, **kwargs)


def _value(reply: Reply) -> Any:
    if reply.error is not None or reply.error_text is not None:
        raise_failure(reply.error, reply.error_text)
    return reply.value


def _fields_of(context: ToolContext) -> ContextFields:
    offers = {"ask"}
    if context.get_backend is not None:
        offers.add("backend")
    if context.search is not None:
        offers.add("search")
    if context.complete is not None:
        offers.add("complete")
    if context.secrets is not None:
        offers.add("secret")
    if context.send is not None:
        offers.add("send")
    if context.look is not None:
        offers.add("look")
    return ContextFields(
        session_id=context.session_id,
        home=context.home,
        cwd=context.cwd,
        source=context.source,
        user_scope=context.user_scope,
        config=dict(context.config),
        offers=frozenset(offers),
    )


def _stand_in(plugin: IsolatedPlugin, hooks: list[str]) -> object:
    """An object implementing ``hooks``, each forwarding to the host."""
    return types.SimpleNamespace(**{hook: _forwarder(plugin, hook) for hook in hooks})


def _forwarder(plugin: IsolatedPlugin, hook: str) -> Callable[..., Any]:
    from hermes_sdk import hookspecs

    spec_function = getattr(hookspecs, hook)
    code = spec_function.__code__
    argnames = code.co_varnames[: code.co_argcount]

    def forward(*args: Any) -> Any:
        return plugin.call_hook(hook, dict(zip(argnames, args, strict=True)))

    # pluggy passes a hook's arguments by the names it reads from the function, following
    # __wrapped__: the hookspec's own names.
    forward.__wrapped__ = spec_function  # type: ignore[attr-defined]  # read by inspect.unwrap
    forward.__name__ = hook
    return hookimpl(forward)
