"""Import and register one plugin under a deadline, so a broken plugin cannot stop the agent.

All of the plugin's own code (its import, pluggy's scan of it, its registration hooks) runs in
a daemon thread against a *private* plugin manager, and the caller waits at most ``timeout``
seconds. An exception, ``SystemExit`` or a hang is caught there. Only a plugin that passed
every check is then registered with the shared manager, by the caller's thread, so a plugin
that misses its deadline has touched no shared state: its thread is simply abandoned (Python
cannot kill a thread) and whatever it does later stays in its private manager. A plugin that
calls ``os._exit`` or crashes the interpreter is beyond in-process isolation; the docs say so.
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
from hermes_sdk._markers import plugin_manager_for
from hermes_sdk.registration import RegistrationError, check_hookimpls, collect_specs


def import_target(target: str) -> Any:
    """Import ``module`` or ``module:attr.path`` and return the object to register."""
    module_name, _, attr_path = target.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for attr in filter(None, attr_path.strip().split(".")):
        obj = getattr(obj, attr)
    return obj


def plugin_object(record: PluginRecord) -> Any:
    """The object to register for ``record``: its entry point's target, or, for a foreign
    plugin, what its source's factory builds from the record's argument."""
    found = import_target(record.target)
    return found if record.argument is None else found(record.argument)


def _top_package(target: str) -> str:
    return target.partition(":")[0].strip().split(".")[0]


def _where(exc: BaseException, package: str) -> str:
    """`` (at file:line)`` of the last traceback frame in the plugin's own code, if any."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [
        frame
        for frame in frames
        if package in Path(frame.filename).parts or Path(frame.filename).stem == package
    ]
    if not own:
        return ""
    last = own[-1]
    return f" (at {Path(last.filename).name}:{last.lineno})"


def _where_foreign(exc: BaseException, source_package: str) -> str:
    """`` (at file:line)`` of the last frame outside the plugin source's own code and the
    import machinery: the foreign plugin's line that failed."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if source_package not in Path(frame.filename).parts
        and "hermes_kernel" not in Path(frame.filename).parts
        and "importlib" not in Path(frame.filename).parts
        and not frame.filename.startswith("<frozen")
    ]
    return f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""


def describe_failure(exc: BaseException, package: str = "", *, foreign: bool = False) -> str:
    """One line saying what went wrong, for users who did not write the plugin (for a
    foreign plugin, ``package`` is its source's, whose frames are not the plugin's)."""
    where = _where_foreign(exc, package) if foreign else _where(exc, package) if package else ""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) while loading{where}"
    if isinstance(exc, RegistrationError):
        return str(exc)
    if isinstance(exc, pluggy.PluginValidationError):
        # pluggy's message spans lines; the last one says what is wrong.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return f"invalid hookimpl: {lines[-1] if lines else exc}"
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}{where}" if message else type(exc).__name__


NOT_A_HERMES_PLUGIN = (
    "not a Hermes plugin: it implements no hermes_* hook but has register(ctx), the shape of "
    "a plugin written for another agent; skipped (a plugin source loads those from their "
    "own entry-point group)"
)


@dataclass
class _Attempt:
    """Filled in by the loading thread; read by the caller only once that thread has ended."""

    stage: str = "import"  # what the thread is doing, for the timeout message
    plugin: object | None = None
    specs: list[Spec] = field(default_factory=list)
    error: BaseException | None = None
    trace_text: str | None = None


def _work(record: PluginRecord, attempt: _Attempt, tracer: Tracer | None) -> None:
    try:
        if record.argument is not None:
            attempt.stage = "build"  # a foreign plugin: its own import and register run here
        plugin = plugin_object(record)
        attempt.stage = "registration"
        private = plugin_manager_for(plugin)
        private.register(plugin, name=record.name)
        check_hookimpls(private, plugin)
        if not private.get_hookcallers(plugin) and callable(getattr(plugin, "register", None)):
            raise RegistrationError(NOT_A_HERMES_PLUGIN)
        observe = None
        if tracer is not None:
            name = record.name

            def observe(hook: str, seconds: float) -> None:
                tracer(hook, name, seconds)

        attempt.specs = collect_specs(private, plugin, observe=observe)
        attempt.plugin = plugin
    except BaseException as exc:  # noqa: BLE001 - isolation is the point: SystemExit included
        attempt.error = exc
        attempt.trace_text = traceback.format_exc()


def _run_under_deadline(record: PluginRecord, timeout: float, tracer: Tracer | None) -> LoadOutcome:
    attempt = _Attempt()
    started = time.perf_counter()
    worker = threading.Thread(
        target=_work, args=(record, attempt, tracer), name=f"hermes-load-{record.name}", daemon=True
    )
    worker.start()
    worker.join(timeout)
    seconds = time.perf_counter() - started
    if worker.is_alive():
        where = {
            "import": "at import",
            "build": "while its plugin source builds it (its import or its register)",
        }.get(attempt.stage, "in a registration hook")
        return LoadOutcome(
            record.name,
            ok=False,
            seconds=seconds,
            error=f"did not finish loading within {timeout:g} s (plugins.load_timeout_seconds); "
            f"it hangs {where}",
        )
    if attempt.error is not None:
        return LoadOutcome(
            record.name,
            ok=False,
            seconds=seconds,
            error=describe_failure(
                attempt.error, _top_package(record.target), foreign=record.argument is not None
            ),
            traceback=attempt.trace_text,
        )
    outcome = LoadOutcome(record.name, ok=True, seconds=seconds, specs=attempt.specs)
    outcome.plugin = attempt.plugin
    return outcome


def load_plugin(
    record: PluginRecord,
    manager: pluggy.PluginManager,
    timeout: float,
    tracer: Tracer | None = None,
) -> LoadOutcome:
    """Import ``record``'s target, check it and collect its specs within ``timeout`` seconds,
    then register it with ``manager``. On any failure nothing is registered there and the
    outcome carries a one-line reason."""
    if record.problems:
        outcome = LoadOutcome(record.name, ok=False, seconds=0.0, error=record.problems[0])
    else:
        outcome = _run_under_deadline(record, timeout, tracer)
    if outcome.ok:
        other = manager.get_name(outcome.plugin) if outcome.plugin is not None else None
        if other is not None:
            outcome.ok, outcome.specs = False, []
            outcome.error = f"{record.target} is already registered as plugin {other!r}"
        else:
            try:
                manager.register(outcome.plugin, name=record.name)
            except ValueError as exc:  # pluggy refuses a name or object it already holds
                outcome.ok, outcome.specs, outcome.error = False, [], f"cannot register: {exc}"
    if tracer is not None:
        tracer("<load>" if outcome.ok else "<load failed>", record.name, outcome.seconds)
    return outcome
