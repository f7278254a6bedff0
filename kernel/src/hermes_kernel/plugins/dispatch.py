"""Call a hook on every plugin, isolating each: one raising, hanging or exiting plugin never
fails or stalls a turn, and the others still run.

pluggy stops at the first exception, so we walk the implementations ourselves, in the order
pluggy would call them (tryfirst/trylast honoured). Each implementation runs in a worker
thread (:mod:`workers`) and is waited for at most ``plugins.hook_timeout_seconds``: past it,
the call is abandoned (its thread finishes on its own), logged with the plugin's name, and
the caller goes on. A plugin that misses the deadline ``limit`` times is disabled for the rest
of the process. The per-call hooks are awaited from the event loop (:meth:`Hooks.acall`), so
the loop, and every other conversation a front-end holds, never waits for a plugin; the others
(:meth:`Hooks.call`) block only the worker thread that calls them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import pluggy
from pluggy import HookImpl

from hermes_kernel.plugins.trace import Tracer
from hermes_kernel.plugins.workers import PluginExit, Workers, plugin_workers
from hermes_sdk.hookspecs import CONTRIBUTION_HOOKS

log = logging.getLogger("hermes.plugins")

STOPPING_SECONDS = 1.0
"""The deadline of a hook once the process is leaving (SIGTERM): it saves, then goes."""

_COLLECTED = frozenset(CONTRIBUTION_HOOKS)


@dataclass(frozen=True)
class HookFailure:
    """An implementation that raised or missed its deadline (already logged): ``reason`` is
    one line for a command that shows it (``hermes status``)."""

    reason: str


def _invoke(impl: HookImpl, hook: str, kwargs: dict[str, Any], tracer: Tracer | None) -> Any:
    """One implementation's result, or a :class:`HookFailure` when it raised (SystemExit
    included)."""
    started = time.perf_counter()
    try:
        result: Any = impl.function(*(kwargs[name] for name in impl.argnames))
        if hook in _COLLECTED and result is not None and not isinstance(result, str):
            result = list(result)  # a generator's body is the plugin's code too
        return result
    except BaseException as exc:
        shown = exc.original if isinstance(exc, PluginExit) else exc
        log.warning(
            "plugin %r raised in %s: %s: %s (skipped; the turn goes on)",
            impl.plugin_name,
            hook,
            type(shown).__name__,
            shown,
            exc_info=log.isEnabledFor(logging.DEBUG),
        )
        return HookFailure(" ".join(f"{type(shown).__name__}: {shown}".split()))
    finally:
        if tracer is not None:
            tracer(hook, impl.plugin_name, time.perf_counter() - started)


class _Wait:
    """One awaited hook call, abandoned by its deadline's timer or by a stop."""

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future
        self.abandoned = False

    def abandon(self) -> None:
        self.abandoned = True
        self.future.cancel()


class Hooks:
    """Guarded hook calls for one plugin manager."""

    def __init__(
        self,
        manager: pluggy.PluginManager,
        timeout: float = 5.0,
        *,
        limit: int = 3,
        tracer: Tracer | None = None,
        workers: Workers = plugin_workers,
    ) -> None:
        self.manager = manager
        self.timeout = timeout
        self.limit = limit
        self.tracer = tracer
        self.workers = workers
        self.timeouts: Counter[str] = Counter()
        self.disabled: dict[str, str] = {}
        """Plugins switched off for the rest of the process, and why."""
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._waiting: set[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = set()
        """Each awaited hook call's loop and what abandons it (for :meth:`stop`)."""

    def implementations(self, hook: str) -> list[HookImpl]:
        """The live implementations of ``hook`` in the order pluggy calls them (pluggy calls
        the last-registered first; get_hookimpls() is the reverse)."""
        caller: pluggy.HookCaller = getattr(self.manager.hook, hook)
        return [i for i in reversed(caller.get_hookimpls()) if i.plugin_name not in self.disabled]

    @property
    def deadline(self) -> float:
        return min(self.timeout, STOPPING_SECONDS) if self._stopping.is_set() else self.timeout

    def _submit(self, impl: HookImpl, hook: str, kwargs: dict[str, Any]) -> Future[Any]:
        return self.workers.submit(lambda: _invoke(impl, hook, kwargs, self.tracer))

    def call(self, hook: str, kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
        """Call ``hook`` on every implementation from a thread that is not the event loop's;
        return (plugin, result) for those that returned in time without raising."""
        return [
            (plugin, result)
            for plugin, result in self.answers(hook, kwargs)
            if not isinstance(result, HookFailure)
        ]

    def answers(
        self, hook: str, kwargs: dict[str, Any], *, at_least: float = 0.0
    ) -> list[tuple[str, Any]]:
        """:meth:`call`, with a :class:`HookFailure` as the result of each implementation
        that raised or missed the deadline, for a command that shows every plugin's part.
        ``at_least`` lengthens the deadline for a hook that does real work (an import)."""
        return [
            (impl.plugin_name, self.answer(impl, hook, kwargs, at_least=at_least))
            for impl in self.implementations(hook)
        ]

    def answer(
        self, impl: HookImpl, hook: str, kwargs: dict[str, Any], *, at_least: float = 0.0
    ) -> Any:
        """One implementation's answer, from a thread that is not the event loop's: its
        result, or a :class:`HookFailure` when it raised or missed the deadline."""
        future = self._submit(impl, hook, kwargs)
        deadline = self.deadline if self._stopping.is_set() else max(self.deadline, at_least)
        ends = time.monotonic() + deadline
        cut = self._stopping.is_set()
        while True:  # in slices, so a stop (SIGTERM) shortens the wait at once
            if not cut and self._stopping.is_set():  # from now, STOPPING_SECONDS at most
                ends, cut = min(ends, time.monotonic() + STOPPING_SECONDS), True
            left = ends - time.monotonic()
            try:
                return future.result(timeout=max(0.0, min(left, 0.25)))
            except FutureTimeout:
                if left > 0.25:
                    continue
                self._missed(impl.plugin_name, hook)
                return HookFailure(f"no answer within {deadline:g} s")

    async def acall(self, hook: str, kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
        """:meth:`call` for the event loop: the loop goes on serving while hooks run."""
        results: list[tuple[str, Any]] = []
        for impl in self.implementations(hook):
            result = await self.aanswer(impl, hook, kwargs)
            if not isinstance(result, HookFailure):
                results.append((impl.plugin_name, result))
        return results

    async def aanswer(self, impl: HookImpl, hook: str, kwargs: dict[str, Any]) -> Any:
        """One implementation's answer, awaited on the event loop under the deadline: its
        result, or a :class:`HookFailure` when it raised or missed the deadline."""
        loop = asyncio.get_running_loop()
        waiting = asyncio.wrap_future(self._submit(impl, hook, kwargs), loop=loop)
        abandoned: list[bool] = []

        def abandon() -> None:
            abandoned.append(True)
            waiting.cancel()

        # A timer rather than asyncio.wait: the common case (a hook that returns) then
        # costs one hop to the worker and back, and nothing more.
        timer = loop.call_later(self.deadline, abandon)
        entry = (loop, abandon)
        with self._lock:
            self._waiting.add(entry)
        try:
            return await waiting
        except asyncio.CancelledError:
            if not abandoned:
                raise  # the caller itself was cancelled
            self._missed(impl.plugin_name, hook)
            return HookFailure(f"no answer within {self.deadline:g} s")
        finally:
            timer.cancel()
            with self._lock:
                self._waiting.discard(entry)

    def switched_off(self, hook: str) -> list[tuple[str, str]]:
        """The plugins implementing ``hook`` that were switched off for this process, and
        why (for a gate: each still answers no)."""
        caller: pluggy.HookCaller = getattr(self.manager.hook, hook)
        return [
            (impl.plugin_name, self.disabled[impl.plugin_name])
            for impl in caller.get_hookimpls()
            if impl.plugin_name in self.disabled
        ]

    def stop(self) -> None:
        """The process is leaving: hooks waited for now end at once, later ones get
        ``STOPPING_SECONDS``. Safe from any thread or a signal handler."""
        self._stopping.set()
        with self._lock:
            waiting = list(self._waiting)
        for loop, abandon in waiting:
            if not loop.is_closed():
                loop.call_soon_threadsafe(abandon)

    def _missed(self, plugin: str, hook: str) -> None:
        if self._stopping.is_set():
            log.info("plugin %r: %s left running (hermes is leaving)", plugin, hook)
            return
        with self._lock:
            self.timeouts[plugin] += 1
            count = self.timeouts[plugin]
            disable = count >= self.limit and plugin not in self.disabled
            if disable:
                self.disabled[plugin] = (
                    f"its hooks missed the {self.timeout:g} s deadline {count} times"
                )
        log.warning(
            "plugin %r: %s did not return within %g s (plugins.hook_timeout_seconds); left "
            "running, the turn goes on",
            plugin,
            hook,
            self.timeout,
        )
        if disable:
            log.warning(
                "plugin %r is disabled for the rest of this process: its hooks missed the "
                "deadline %d times (see hermes plugins list; fix or disable it with: hermes "
                "plugins disable %s)",
                plugin,
                count,
                plugin,
            )
