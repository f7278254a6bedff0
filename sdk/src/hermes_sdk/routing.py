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
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from hermes_sdk.ladder import Endpoint, LadderChoice
from hermes_sdk.models import ModelProvider, ModelUsage, ProviderError
from hermes_sdk.provided import ProvidedSpecs

__all__ = ["ModelRouter", "NoModel", "Route", "RouteRequest", "Routing", "RoutingView"]


class NoModel(Exception):
    """No model can be used; the message is one line that says what to do."""


# Plain classes, not dataclasses: every process that uses a model imports this module, and a
# dataclass costs about 0.5 ms to define (measured at start-up). Fields may be added in minor
# versions, always as keyword arguments with a default.


class RouteRequest:
    """What the kernel asks a router with."""

    __slots__ = ("config", "home", "model", "provided", "provider", "reread", "secret")

    def __init__(
        self,
        *,
        config: Mapping[str, Any],
        home: Path,
        secret: Callable[[str], str | None],
        reread: Callable[[str], str | None],
        provided: ProvidedSpecs,
        provider: str | None = None,
        model: str | None = None,
    ) -> None:
        self.config = config
        """config.yaml as loaded (validated): the router reads ``model:`` and its sections."""
        self.home = home
        self.secret = secret
        """A key as this process read it: the environment, then HERMES_HOME/.env."""
        self.reread = reread
        """A key read again now, for a key that was rejected and may have been replaced."""
        self.provided = provided
        """What plugins provide: model clients, ladder rungs, price tables (loaded when
        asked)."""
        self.provider = provider
        """``--provider`` on the command line (strict: no fallback), else None."""
        self.model = model
        """``--model`` on the command line, else None."""


class Route(NamedTuple):
    """A provider instance and the model to ask."""

    name: str
    provider: ModelProvider
    model: str
    fix: Callable[[ProviderError], str | None] | None = None
    """The step that fixes a failure of this route, naming the setting or file at fault
    (the key's variable and where it is read from, the ``base_url`` in config.yaml), or
    None to keep the failure's own words; what a user is told when the model cannot
    answer ends with it."""


class RoutingView:
    """What the router would choose and why, with no provider built and no I/O: for
    ``hermes model``, ``hermes status`` and setup."""

    __slots__ = ("choice", "endpoints", "explanation", "failure", "problems", "strict")

    def __init__(
        self,
        *,
        choice: LadderChoice | None,
        strict: bool = False,
        endpoints: Mapping[str, Endpoint] | None = None,
        explanation: Sequence[str] = (),
        failure: str | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        self.choice = choice
        self.strict = strict
        """Chosen on the command line (``--provider``/``--model``): no fallback."""
        self.endpoints: Mapping[str, Endpoint] = endpoints or {}
        """Every model service the user may name, by name."""
        self.explanation = explanation
        """Lines for ``hermes model --explain``: what was looked at, in order, and why."""
        self.failure = failure
        """Why there is no choice, in one line that says what to do."""
        self.problems = problems
        """What could not take part (a plugin's rung that raised), for warnings."""


class Routing:
    """The routes a session uses, and what to tell the user about them."""

    __slots__ = ("notice", "routes", "view", "warnings")

    def __init__(
        self,
        *,
        routes: Sequence[Route],
        view: RoutingView,
        notice: str = "",
        warnings: Sequence[str] = (),
    ) -> None:
        self.routes = routes
        """The primary first, then the fallbacks (none when the choice was strict)."""
        self.view = view
        self.notice = notice
        """One line the UI shows about the primary (what it is and how to switch)."""
        self.warnings = warnings


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
