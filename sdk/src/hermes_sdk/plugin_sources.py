"""Plugins from elsewhere: what a :class:`~hermes_sdk.PluginSourceSpec` finds.

A source turns plugins written for another agent into Hermes plugins. It finds them (an
entry-point group, a folder) and says, for each, how to build the Hermes plugin object:
``factory`` is an import path (``module:function``) called with ``argument``. The kernel
calls it exactly where it would import a Hermes plugin's entry point: in a loading thread
under ``plugins.load_timeout_seconds``, or in a host process of its own when the name is in
``plugins.isolated``. So whatever the foreign plugin does while registering (hangs, raises,
exits) costs what a Hermes plugin's import would, and nothing more.

Foreign plugins are opt-in: one loads only when named in ``plugins.enabled`` or when a
setting names something it ``declares`` (``memory.provider: NAME``). Their names never make
``plugins.enabled`` an allow-list for Hermes's own plugins.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hermes_sdk.specs import Kind


@dataclass(frozen=True)
class SourceQuery:
    """What the kernel wants from a source: ``names`` (None: every plugin it can find, for a
    listing) in the agent's ``home``."""

    home: Path
    names: frozenset[str] | None = None

    def wants(self, name: str) -> bool:
        return self.names is None or name in self.names


@dataclass(frozen=True)
class ForeignPlugin:
    """One plugin a source found. ``origin`` says where, for ``hermes plugins list``
    (``hermes-agent entry point``, ``hermes-agent folder ~/.hermes/plugins/x``)."""

    name: str
    factory: str  # "module:function", called with ``argument``; returns the plugin object
    argument: str
    origin: str
    distribution: str = ""
    version: str = ""
    summary: str = ""
    declares: frozenset[tuple[Kind, str]] = frozenset()
    """What it provides, when known without loading it; a setting that names one of these
    (``memory.provider``) loads the plugin without ``plugins.enabled``."""


class PluginSource(Protocol):
    """What :class:`~hermes_sdk.PluginSourceSpec`'s factory returns."""

    def find(self, query: SourceQuery) -> list[ForeignPlugin]:
        """The plugins ``query`` asks for that this source can find; never raises for one
        broken plugin (leave it out, or return it so that loading it says what is wrong)."""
        ...
