"""Call a lifecycle hook on every plugin, isolating each: one raising observer never fails
a turn, and the others still run.

pluggy stops at the first exception, so we walk the implementations ourselves, in the order
pluggy would call them (tryfirst/trylast honoured).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pluggy

from hermes_kernel.plugins.trace import Tracer

log = logging.getLogger("hermes.plugins")


def notify(
    manager: pluggy.PluginManager, hook: str, kwargs: dict[str, Any], tracer: Tracer | None = None
) -> list[tuple[str, BaseException]]:
    """Call ``hook`` on every implementation; return the (plugin, error) pairs that raised."""
    caller: pluggy.HookCaller = getattr(manager.hook, hook)
    failures: list[tuple[str, BaseException]] = []
    # pluggy calls the last-registered implementation first; get_hookimpls() is the reverse.
    for impl in reversed(caller.get_hookimpls()):
        started = time.perf_counter()
        try:
            impl.function(*(kwargs[name] for name in impl.argnames))
        except (Exception, SystemExit) as exc:  # an observer must never fail (or end) the turn
            failures.append((impl.plugin_name, exc))
            log.warning(
                "plugin %r raised in %s: %s: %s (skipped; the turn goes on)",
                impl.plugin_name,
                hook,
                type(exc).__name__,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
        finally:
            if tracer is not None:
                tracer(hook, impl.plugin_name, time.perf_counter() - started)
    return failures
