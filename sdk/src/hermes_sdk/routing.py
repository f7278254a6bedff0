"""The contract between the kernel and the plugin that picks a session's models.

A turn needs routes: a provider instance and the model to ask, the primary first, then the
fallbacks. Which ones is a plugin's decision (the standard bundle's ``providers`` plugin
walks the provider ladder of :mod:`hermes_sdk.ladder`); the kernel only asks the
:class:`ModelRouter` that a :class:`~hermes_sdk.specs.ModelRouterSpec` builds, and uses what
it returns. With no router installed, no model can be used, and the kernel says what to
install.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hermes_sdk.ladder import Endpoint, LadderChoice
from hermes_sdk.models import ModelProvider, ModelUsage
from hermes_sdk.provided import ProvidedSpecs

__all__ = ["ModelRouter", "NoModel", "Route", "RouteRequest", "Routing", "RoutingView"]


class NoModel(Exception):
    """No model can be used; the message is one line that says what to do."""


@dataclass(frozen=True, kw_only=True)
class RouteRequest:
    config: Mapping[str, Any]
    """config.yaml as loaded (validated): the router reads ``model:`` and its own sections."""
    home: Path
    secret: Callable[[str], str | None]
    """A key as this process read it: the environment, then HERMES_HOME/.env."""
    reread: Callable[[str], str | None]
    """A key read again now, for a key that was rejected and may have been replaced."""
    provided: ProvidedSpecs
    """What plugins provide: model clients, ladder steps, price tables (loaded when asked)."""
    provider: str | None = None
    """``--provider`` on the command line (strict: no fallback), else None."""
    model: str | None = None
    """``--model`` on the command line, else None."""


@dataclass(frozen=True)
class Route:
    """A provider instance and the model to ask."""

    name: str
    provider: ModelProvider
    model: str


@dataclass(frozen=True, kw_only=True)
class RoutingView:
    """What the router would choose and why, with no provider built and no I/O: for
    ``hermes model``, ``hermes status`` and setup."""

    choice: LadderChoice | None
    strict: bool = False
    """Chosen on the command line (``--provider``/``--model``): no fallback."""
    endpoints: Mapping[str, Endpoint] = field(default_factory=dict)
    """Every model service the user may name, by name."""
    explanation: Sequence[str] = ()
    """Lines for ``hermes model --explain``: what was looked at, in order, and why."""
    failure: str | None = None
    """Why there is no choice, in one line that says what to do."""
    problems: Sequence[str] = ()
    """What could not take part (a plugin's step that raised), for warnings."""


@dataclass(frozen=True, kw_only=True)
class Routing:
    routes: Sequence[Route]
    """The primary first, then the fallbacks (none when the choice was strict)."""
    view: RoutingView
    notice: str = ""
    """One line the UI shows about the primary (what it is and how to switch)."""
    warnings: Sequence[str] = ()


class ModelRouter(Protocol):
    def view(self, request: RouteRequest) -> RoutingView:
        """The choice and its explanation; never raises for a missing key or model."""
        ...

    def route(self, request: RouteRequest) -> Routing:
        """Build the routes; raises :class:`NoModel` (one line) when none can be used."""
        ...

    def cost(self, provided: ProvidedSpecs) -> Callable[[str, ModelUsage], float | None]:
        """US dollars for a model's usage, from the price tables in ``provided``; None for a
        model no table prices."""
        ...
