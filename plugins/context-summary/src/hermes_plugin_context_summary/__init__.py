"""Hermes' default context engine (``compression.engine: summary``): the messages a
compaction replaces become a structured summary written by the auxiliary model, and, when
that model cannot be had, a summary written without one."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import ContextEngineSpec, hookimpl

__all__ = ["hermes_context_engines"]


@hookimpl
def hermes_context_engines() -> Iterator[ContextEngineSpec]:
    yield ContextEngineSpec(
        name="summary",
        description="older messages become a summary by the auxiliary model",
        factory="hermes_plugin_context_summary.engine:SummaryEngine",
    )
