"""Import and register one plugin under a deadline, so a broken plugin cannot stop the agent.

The work runs in a daemon thread: an exception, ``SystemExit`` or a hang is caught there, and
the caller waits at most ``timeout`` seconds. A plugin that misses the deadline is marked
failed and unregistered; its thread is abandoned (Python cannot kill a thread) and whatever it
does later is discarded. A plugin that calls ``os._exit`` or crashes the interpreter is beyond
in-process isolation; the docs say so.
"""

from __future__ import annotations

import importlib
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from hermes_kernel.plugins.records import LoadOutcome, PluginRecord
from hermes_kernel.plugins.trace import Tracer
from hermes_sdk import Spec
from hermes_sdk.registration import RegistrationError, check_hookimpls, collect_specs


def import_target(target: str) -> Any:
    """Import ``module`` or ``module:attr.path`` and return the object to register."""
    module_name, _, attr_path = target.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for attr in filter(None, attr_path.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {Path(last.filename).name}:{last.lineno})"


def describe_failure(exc: BaseException) -> str:
    """One line saying what went wrong, for users who did not write the plugin."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) while loading{_where(exc)}"
    if isinstance(exc, RegistrationError):
        return str(exc)
    if isinstance(exc, pluggy.PluginValidationError):
        # pluggy's message spans lines; the last one says what is wrong.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return f"invalid hookimpl: {lines[-1] if lines else exc}"
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}{_where(exc)}" if message else type(exc).__name__


@dataclass
class _Attempt:
    """Shared between the caller and the loading thread; guarded by ``lock``."""

    lock: threading.Lock
    abandoned: bool = False
    registered: object | None = None
    specs: list[Spec] = field(default_factory=list)
    error: BaseException | None = None
    trace_text: str | None = None
    done: bool = False


def _work(
    record: PluginRecord, manager: pluggy.PluginManager, attempt: _Attempt, tracer: Tracer | None
) -> None:
    try:
        obj = import_target(record.target)
        with attempt.lock:
            if attempt.abandoned:
                return
            manager.register(obj, name=record.name)
            attempt.registered = obj
        check_hookimpls(manager, obj)
        observe = None
        if tracer is not None:
            name = record.name

            def observe(hook: str, seconds: float) -> None:
                tracer(hook, name, seconds)

        specs = collect_specs(manager, obj, observe=observe)
        with attempt.lock:
            attempt.specs = specs
            attempt.done = True
    except BaseException as exc:  # noqa: BLE001 - isolation is the point: SystemExit included
        with attempt.lock:
            attempt.error = exc
            attempt.trace_text = traceback.format_exc()
            attempt.done = True


def _unregister(manager: pluggy.PluginManager, obj: object | None) -> None:
    if obj is not None and manager.is_registered(obj):
        manager.unregister(obj)


def load_plugin(
    record: PluginRecord,
    manager: pluggy.PluginManager,
    timeout: float,
    tracer: Tracer | None = None,
) -> LoadOutcome:
    """Import ``record``'s target, register it and collect its specs, within ``timeout`` s.

    On any failure nothing stays registered and the outcome carries a one-line reason.
    """
    if record.problems:
        return LoadOutcome(record.name, ok=False, seconds=0.0, error=record.problems[0])
    attempt = _Attempt(lock=threading.Lock())
    started = time.perf_counter()
    worker = threading.Thread(
        target=_work,
        args=(record, manager, attempt, tracer),
        name=f"hermes-load-{record.name}",
        daemon=True,
    )
    worker.start()
    worker.join(timeout)
    seconds = time.perf_counter() - started
    with attempt.lock:
        if not attempt.done:
            attempt.abandoned = True
            _unregister(manager, attempt.registered)
            return LoadOutcome(
                record.name,
                ok=False,
                seconds=seconds,
                error=f"did not finish loading within {timeout:g} s "
                "(plugins.load_timeout_seconds); it may hang at import",
            )
        if attempt.error is not None:
            _unregister(manager, attempt.registered)
            return LoadOutcome(
                record.name,
                ok=False,
                seconds=seconds,
                error=describe_failure(attempt.error),
                traceback=attempt.trace_text,
            )
    if tracer is not None:
        tracer("<load>", record.name, seconds)
    return LoadOutcome(record.name, ok=True, seconds=seconds, specs=attempt.specs)
