"""The provider ladder's contract: endpoints, rungs and what a rung decides.

The standard model router (the ``providers`` plugin; see :mod:`hermes_sdk.routing`) picks
the model for a session by walking an ordered chain of rungs, lowest
``position`` first. Each rung looks at a :class:`LadderContext` and returns a
:class:`RungResult`: it **matches** (the ladder stops and uses its :class:`LadderChoice`),
**fails** with a reason (the ladder stops and the user is told why: the rung was responsible
for what was asked and cannot deliver it), or **passes** (not its business; on to the next).
Every result says what the rung saw, which ``hermes model --explain`` prints.

Positions used by the ``providers`` plugin and the bundled ones (leave gaps for yours)::

    100 command-line   200 custom-provider   300 local-endpoint   400 credential-pool
    510 openai-key     520 anthropic-key     530 openrouter-key   900 embedded
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_sdk.specs import RungSpec

__all__ = [
    "Endpoint",
    "LadderChoice",
    "LadderContext",
    "RungOutcome",
    "RungResult",
    "TokenSource",
    "api_key_rung",
]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A model service: which provider plugin speaks its protocol, and where it is."""

    name: str
    """How users refer to it: ``openai``, ``anthropic``, ``local``, or a custom name."""
    provider: str
    """The :class:`~hermes_sdk.specs.ProviderSpec` that talks to it (its transport); ""
    for the provider that speaks for endpoints naming none (``default_transport``)."""
    base_url: str
    api_key_env: str | None = None
    """The environment (or .env) variable holding its key; None when it needs none."""
    other_key_envs: tuple[str, ...] = ()
    """More variables its key may be in, read in order after ``api_key_env`` (the names
    another tool uses for the same key)."""
    default_model: str = ""
    models: tuple[str, ...] = ()
    notice: str = ""
    """One line the UI shows when this endpoint is picked (say what it is and how to switch)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Passed to the provider as ``ProviderSettings.options``."""
    stream: bool = True
    """Passed to the provider as ``ProviderSettings.stream``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Passed to the provider as ``ProviderSettings.headers`` (a service that wants to know
    the client: Copilot's ``Editor-Version``)."""


@runtime_checkable
class TokenSource(Protocol):
    """A sign-in's access token, renewed before it expires. ``token(renew=True)`` asks for
    a new one now (the service refused the last): it raises
    :class:`~hermes_sdk.models.ProviderError` (``AUTH``, one line saying how to sign in
    again) when it cannot."""

    async def token(self, *, renew: bool = False) -> str: ...


@dataclass(frozen=True, slots=True)
class LadderChoice:
    """What a matching rung picked."""

    endpoint: Endpoint
    model: str
    api_keys: tuple[str, ...] = ()
    """The key(s) to send, only ever to ``endpoint.base_url``; more than one is a pool."""
    source: str = ""
    """Where the choice came from, for people: ``OPENAI_API_KEY in the environment``."""
    key_names: tuple[str, ...] = ()
    """The variables the keys were read from, in the same order (read again to refresh)."""
    token_source: TokenSource | None = None
    """A sign-in instead of keys: the route asks it for the token before each request."""
    pool: tuple[LadderChoice, ...] = ()
    """More sign-ins to the same service (a second account), each a choice of its own with
    its token source, its ``key_names`` (one name, for states and messages) and its
    endpoint (its own account header or API address). This choice is tried first, then
    these in order, rotated as a pool of keys is: on rate limits, billing and refusals."""


class RungOutcome(enum.StrEnum):
    MATCH = "match"
    FAIL = "fail"
    PASS = "pass"


@dataclass(frozen=True, slots=True)
class RungResult:
    outcome: RungOutcome
    saw: str
    """What the rung looked at, in a few words (never a secret's value)."""
    reason: str = ""
    choice: LadderChoice | None = None

    @classmethod
    def match(cls, choice: LadderChoice, saw: str, reason: str = "") -> RungResult:
        return cls(RungOutcome.MATCH, saw, reason, choice)

    @classmethod
    def fail(cls, saw: str, reason: str) -> RungResult:
        """``reason`` is one line that says what to fix."""
        return cls(RungOutcome.FAIL, saw, reason)

    @classmethod
    def skip(cls, saw: str, reason: str = "") -> RungResult:
        """Pass: this rung does not apply; the ladder goes on."""
        return cls(RungOutcome.PASS, saw, reason)


@dataclass(frozen=True)
class LadderContext:
    """What every rung may look at."""

    provider: str | None
    """The endpoint asked for (``--provider``, else config ``model.provider``); None = auto."""
    model: str | None
    """The model asked for (``--model``, else config ``model.default``); None = the default."""
    explicit: bool
    """True when the command line chose: the choice is then strict (no silent fallback)."""
    endpoints: Mapping[str, Endpoint]
    """Every known endpoint: those the plugins' rungs declare plus the config's custom ones."""
    home: Path
    config: Mapping[str, Any]
    """The whole config.yaml, for rungs that read their own keys."""
    secret: Callable[[str], str | None]
    """Look up a secret by name (process environment first, then HERMES_HOME/.env)."""

    def wants(self, endpoint_name: str) -> bool:
        """Auto mode, or this endpoint asked for by name."""
        return self.provider is None or self.provider == endpoint_name


def api_key_rung_resolver(endpoint: Endpoint) -> Callable[[LadderContext], RungResult]:
    """The logic of an "API key in the environment" rung for ``endpoint``."""
    variable = endpoint.api_key_env or ""

    def resolve(context: LadderContext) -> RungResult:
        if not context.wants(endpoint.name):
            return RungResult.skip(f"provider {context.provider!r} asked for")
        if context.provider is None and context.model and context.model not in endpoint.models:
            owners = sorted(e.name for e in context.endpoints.values() if context.model in e.models)
            if owners:  # auto mode: do not send another endpoint's model here
                return RungResult.skip(f"model {context.model!r} is {owners[0]}'s")
        key = context.secret(variable)
        if not key:
            saw = f"{variable} not set"
            if context.provider == endpoint.name:
                return RungResult.fail(
                    saw,
                    f"provider {endpoint.name!r} needs {variable}: add it to "
                    f"{context.home / '.env'} or run `hermes setup`",
                )
            return RungResult.skip(saw)
        model = context.model or endpoint.default_model
        choice = LadderChoice(
            endpoint,
            model,
            (key,),
            source=f"{variable} (environment or .env)",
            key_names=(variable,),
        )
        return RungResult.match(choice, f"{variable} is set")

    return resolve


def api_key_rung(endpoint: Endpoint, position: int, description: str = "") -> RungSpec:
    """A ready-made rung named ``<endpoint>-key``: match ``endpoint`` when its API key
    variable is set."""
    if not endpoint.api_key_env:
        raise ValueError(f"endpoint {endpoint.name!r} has no api_key_env for an API-key rung")
    return RungSpec(
        name=f"{endpoint.name}-key",
        description=description or f"{endpoint.api_key_env} in the environment or .env",
        position=position,
        resolve=api_key_rung_resolver(endpoint),
        endpoint=endpoint,
    )
