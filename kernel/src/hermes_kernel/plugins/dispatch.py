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
from hermes_sdk.hookspecs import CONTRIBUTION_HOOKS

log = logging.getLogger("hermes.plugins")


def call_each(
    manager: pluggy.PluginManager, hook: str, kwargs: dict[str, Any], tracer: Tracer | None = None
) -> list[tuple[str, Any]]:
    """Call ``hook`` on every implementation; return (plugin, result) for those that did not
    raise. One that raises is logged and skipped."""
    caller: pluggy.HookCaller = getattr(manager.hook, hook)
    results: list[tuple[str, Any]] = []
    # pluggy calls the last-registered implementation first; get_hookimpls() is the reverse.
    for impl in reversed(caller.get_hookimpls()):
        started = time.perf_counter()
        try:
            result: Any = impl.function(*(kwargs[name] for name in impl.argnames))
            if hook in _COLLECTED and result is not None and not isinstance(result, str):
                result = list(result)  # a generator's body is the plugin's code too
            results.append((impl.plugin_name, result))
        except (Exception, SystemExit) as exc:  # a plugin must never fail (or end) the turn
            log.warning(
                "plugin %r raised in %s: %s: %s (skipped; the turn goes on)",
                impl.plugin_name,
                hook,
                type(exc).__name__,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
        finally:
            seconds = time.perf_counter() - started
            if tracer is not None:
                tracer(hook, impl.plugin_name, seconds)
            if seconds >= SLOW_HOOK_SECONDS and hook in _INLINE:
                _warn_slow(impl.plugin_name, hook, seconds)
    return results


SLOW_HOOK_SECONDS = 0.1
"""A lifecycle hook that takes this long is named in the log (once per plugin and hook)."""

_COLLECTED = frozenset(CONTRIBUTION_HOOKS)
_INLINE = frozenset(
    {"hermes_pre_llm_call", "hermes_post_llm_call", "hermes_pre_tool_call", "hermes_post_tool_call"}
)
"""Called on the agent's event loop (the session hooks run in a worker thread)."""
_warned: set[tuple[str, str]] = set()


def _warn_slow(plugin: str, hook: str, seconds: float) -> None:
    """The per-call hooks run on the agent's event loop, where a gateway's every
    conversation waits while one runs: a slow one is worth a line that names it."""
    if (plugin, hook) in _warned:
        return
    _warned.add((plugin, hook))
    log.warning(
        "plugin %r: %s took %.0f ms, and every conversation waited for it (this hook runs "
        "on the agent's event loop; a plugin should hand slow work to a thread)",
        plugin,
        hook,
        seconds * 1000,
    )
