"""Foreign plugins: ask the plugin sources (``hermes_plugin_sources``) what they find.

A source is plugin code, so it is asked like any hook: in a thread, under the load deadline,
and one that raises, hangs or answers nonsense adds nothing (one line says so). What it finds
becomes :class:`PluginRecord` entries the host loads like any other, through the source's
factory (:func:`~hermes_kernel.plugins.loader.plugin_object`).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import PluginSourceSpec
from hermes_sdk.plugin_sources import ForeignPlugin, SourceQuery
from hermes_sdk.registration import Provided

log = logging.getLogger("hermes.plugins")


def ask_sources(
    sources: list[Provided], timeout: float, home: Path, names: frozenset[str] | None
) -> list[PluginRecord]:
    """Every foreign plugin the ``sources`` find for ``names`` (None: all)."""
    found: list[PluginRecord] = []
    for provided in sources:
        spec = provided.spec
        assert isinstance(spec, PluginSourceSpec)
        answer = _ask(spec, SourceQuery(home, names), timeout)
        if isinstance(answer, str):
            log.warning("plugin source %r (plugin %r): %s", spec.name, provided.plugin, answer)
            continue
        found += [_record(one) for one in answer]
    return found


def _ask(spec: PluginSourceSpec, query: SourceQuery, timeout: float) -> list[ForeignPlugin] | str:
    """The source's answer, or one line saying why there is none."""
    result: list[Any] = []

    def work() -> None:
        try:
            result.append(list(spec.build().find(query)))
        except Exception as exc:  # noqa: BLE001 - a source's bug must not stop the agent
            result.append(f"failed: {type(exc).__name__}: {exc}")

    worker = threading.Thread(target=work, name=f"hermes-source-{spec.name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if not result:
        return f"did not answer within {timeout:g} s (plugins.load_timeout_seconds)"
    answer = result[0]
    if isinstance(answer, str):
        return answer
    if not all(isinstance(one, ForeignPlugin) for one in answer):
        return "find() must return ForeignPlugin objects"
    return list(answer)


def _record(plugin: ForeignPlugin) -> PluginRecord:
    return PluginRecord(
        plugin.name,
        plugin.factory,
        plugin.distribution or "-",
        plugin.version or "-",
        declares=plugin.declares,
        summary=plugin.summary,
        argument=plugin.argument,
        origin=plugin.origin,
    )
