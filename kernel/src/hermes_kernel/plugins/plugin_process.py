"""A plugin host process: one plugin from ``plugins.isolated``, served to the agent.

Started by :mod:`isolation` as ``python -m hermes_kernel.plugins.plugin_process READ WRITE``
(the file descriptors of its pipes). It loads the plugin with the kernel's own loader, tells
the agent what it provides, then runs each hook or tool call it is asked for in a thread of
its own, so a slow call never holds up the next. When the agent goes away (its end of the
pipe closes) the host leaves at once, whatever its threads are doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import itertools
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import Any, cast

import pluggy

from hermes_kernel.plugins.loader import load_plugin
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
    ImportedModel,
    Load,
    Loaded,
    Progress,
    Reply,
    failure_of,
    raise_failure,
    remote_handler,
)
from hermes_kernel.plugins.workers import PluginExit, Workers
from hermes_sdk import ConfigSectionSpec, Spec, ToolSpec, new_plugin_manager
from hermes_sdk.hookspecs import CONTRIBUTION_HOOKS, GATE_HOOKS, LIFECYCLE_HOOKS, TURN_HOOKS
from hermes_sdk.specs import Reference
from hermes_sdk.terminal import TerminalBackend
from hermes_sdk.tooling import ToolContext, show_progress_with

log = logging.getLogger("hermes.plugins")


class _Backend:
    """The session's terminal backend, in the agent: every method call is a callback."""

    def __init__(self, host: Served, call: int) -> None:
        self._host = host
        self._call = call
        described: dict[str, Any] = host.callback(call, "backend")
        for name, value in described.items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def method(*args: Any, **kwargs: Any) -> Any:
            if isinstance(kwargs.get("cancel"), threading.Event):
                kwargs["cancel"] = CANCEL  # the agent passes the call's own event
            kwargs.pop("on_output", None)  # output arrives whole, when the command ends
            return self._host.callback(self._call, f"backend.{name}", *args, **kwargs)

        return method


class Served:
    """The loaded plugin and the calls in flight."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.manager: pluggy.PluginManager = new_plugin_manager()
        self.plugin: object | None = None
        self.tools: dict[str, ToolSpec] = {}
        self.workers = Workers("hermes-host")
        self._cancels: dict[int, threading.Event] = {}
        self._waiting: dict[int, Future[Any]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # --- requests ---------------------------------------------------------------------

    def handle(self, message: object) -> None:
        if isinstance(message, CallTool):
            cancel = threading.Event()
            with self._lock:
                self._cancels[message.id] = cancel
            context = contextvars.Context()  # the call's own: its progress goes to its id
            self.workers.submit(
                lambda: context.run(self._answer, message.id, self._tool, message, cancel)
            )
        elif isinstance(message, CallHook):
            self.workers.submit(lambda: self._answer(message.id, self._hook, message))
        elif isinstance(message, Cancel):
            with self._lock:
                event = self._cancels.get(message.id)
            if event is not None:
                event.set()
        elif isinstance(message, Answer):
            with self._lock:
                future = self._waiting.pop(message.id, None)
            if future is not None:
                future.set_result(message)
        elif isinstance(message, Load):
            self.channel.send(self._load(message))

    def _answer(self, request: int, work: Any, *args: Any) -> None:
        try:
            reply = Reply(request, value=work(*args))
        except PluginExit as exc:
            error, text = failure_of(exc.original)
            reply = Reply(request, error=error, error_text=text)
        except BaseException as exc:  # noqa: BLE001 - the plugin's failure goes back as a result
            error, text = failure_of(exc)
            reply = Reply(request, error=error, error_text=text)
        finally:
            with self._lock:
                self._cancels.pop(request, None)
        try:
            self.channel.send(reply)
        except (OSError, ValueError):
            os._exit(0)  # the agent is gone
        except Exception as exc:  # noqa: BLE001 - a value that does not pickle: send its text
            self.channel.send(Reply(request, value=str(reply.value), error_text=None))
            log.debug("a reply did not pickle (%s); sent as text", exc)

    def _load(self, message: Load) -> Loaded:
        outcome = load_plugin(message.record, self.manager, message.timeout)
        if not outcome.ok:
            return Loaded(outcome.seconds, error=outcome.error, traceback=outcome.traceback)
        self.plugin = outcome.plugin
        specs: list[Spec] = []
        refused: list[str] = []
        for spec in outcome.specs:
            if spec.kind not in PROXIED_KINDS:
                refused.append(f"{spec.kind.value} {spec.name!r}")
            elif isinstance(spec, ToolSpec):
                self.tools[spec.name] = spec
                specs.append(replace(spec, handler=remote_handler))
            elif isinstance(spec, ConfigSectionSpec):
                model = spec.model
                if isinstance(model, Reference):  # "package.module:Model", not imported yet
                    module, _, qualname = model.text.partition(":")
                else:
                    assert not isinstance(model, str)  # text became a Reference
                    module, qualname = model.__module__, model.__qualname__
                specs.append(replace(spec, model=ImportedModel(module, qualname)))
            else:
                specs.append(spec)
        hooks = sorted(
            caller.name
            for caller in self.manager.get_hookcallers(self.plugin) or []
            if caller.name in (*LIFECYCLE_HOOKS, *CONTRIBUTION_HOOKS, *GATE_HOOKS, *TURN_HOOKS)
        )
        return Loaded(outcome.seconds, specs=specs, hooks=hooks, refused=refused)

    def _hook(self, message: CallHook) -> Any:
        caller: pluggy.HookCaller = getattr(self.manager.hook, message.hook)
        for impl in caller.get_hookimpls():
            if impl.plugin is self.plugin:
                result: Any = impl.function(*(message.kwargs[n] for n in impl.argnames))
                if message.hook in CONTRIBUTION_HOOKS and result is not None:
                    return result if isinstance(result, str) else list(result)
                return result
        return None

    def _tool(self, message: CallTool, cancel: threading.Event) -> Any:
        spec = self.tools[message.tool]
        kwargs = dict(message.arguments)
        if spec.takes_context:
            kwargs["context"] = self._context(message.id, message.context, cancel)
        show_progress_with(lambda text: self._send(Progress(message.id, text)))
        handler = spec.handler
        if inspect.iscoroutinefunction(handler):
            return asyncio.run(handler(**kwargs))
        result = handler(**kwargs)
        if inspect.isawaitable(result):
            return asyncio.run(_settle(result))
        return result

    def _context(
        self, call: int, fields: ContextFields | None, cancel: threading.Event
    ) -> ToolContext:
        if fields is None:
            return ToolContext(session_id="", home="", cwd=os.getcwd(), cancel=cancel)
        offers = fields.offers

        def offered(name: str) -> Any:
            if name not in offers:
                return None
            return lambda *args: self.callback(call, name, *args)

        return ToolContext(
            session_id=fields.session_id,
            home=fields.home,
            cwd=fields.cwd,
            cancel=cancel,
            get_backend=self._backend_of(call) if "backend" in offers else None,
            ask=offered("ask") or (lambda question, choices: None),
            source=fields.source,
            user_scope=fields.user_scope,
            config=fields.config,
            search=offered("search"),
            complete=offered("complete"),
            secrets=offered("secret"),
            send=offered("send"),
            look=offered("look"),
        )

    def _backend_of(self, call: int) -> Callable[[], TerminalBackend]:
        def backend() -> TerminalBackend:
            # Duck-typed: every method is the agent's backend's, through a callback.
            return cast(TerminalBackend, _Backend(self, call))

        return backend

    # --- asking the agent ----------------------------------------------------------------

    def callback(self, call: int, name: str, *args: Any, **kwargs: Any) -> Any:
        """What the agent's context for tool call ``call`` answers; raises what it raised."""
        future: Future[Answer] = Future()
        with self._lock:
            number = next(self._ids)
            self._waiting[number] = future
        self._send(Callback(number, call, name, args, kwargs))
        answer = future.result()
        if answer.error is not None or answer.error_text is not None:
            raise_failure(answer.error, answer.error_text)
        return answer.value

    def _send(self, message: object) -> None:
        try:
            self.channel.send(message)
        except (OSError, ValueError):
            os._exit(0)


async def _settle(awaitable: Any) -> Any:
    return await awaitable


def _logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("hermes: %(levelname)s: %(message)s"))
    logger = logging.getLogger("hermes")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def main(argv: list[str]) -> None:
    channel = Channel.of_fds(int(argv[1]), int(argv[2]))
    _logging()
    served = Served(channel)
    while True:
        try:
            message = channel.recv()
        except (EOFError, OSError):
            break
        served.handle(message)
    # The agent closed its end: leave now, without waiting for plugin threads.
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
