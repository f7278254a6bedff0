"""Services: long-running front-ends (an HTTP API, a scheduler) that the gateway hosts beside
its platforms, each with the :class:`~hermes_sdk.runtime.Runtime` to drive the agent.

``hermes gateway run`` starts every enabled service (``<section>.enabled`` in config.yaml,
else the spec's ``enabled_by_default``). A service that raises, or whose ``run`` returns, is
reported in ``hermes gateway status`` and started again with backoff; the platforms and the
other services keep running. A plugin's own command may run the same service alone::

    @click.command()
    def serve():
        context = click.get_current_context().meta[COMMAND_CONTEXT]

        async def main():
            async with context.open_runtime() as runtime:
                await ApiServer(...).run(runtime)

        asyncio.run(main())
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_sdk.runtime import Runtime

__all__ = ["Service", "ServiceContext", "ServiceNotConfigured"]


class ServiceNotConfigured(Exception):
    """Raise from a service's factory or ``run`` when it cannot start until the user changes
    its config (a missing key): it is reported and not restarted. The message says what to
    set, in one line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceContext:
    """What a service's factory gets."""

    name: str
    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """The service's section of config.yaml, as written."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Environment variables and HERMES_HOME/.env, for keys. Never log these values."""
    in_gateway: bool = False
    """True when the gateway hosts it (``Runtime.deliver`` sends directly)."""


class Service(Protocol):
    """What a service's factory returns."""

    async def run(self, runtime: Runtime) -> None:
        """Serve until cancelled (the gateway stops it by cancelling this coroutine: close
        what you opened in a ``finally``). Returning or raising counts as a failure and the
        service is started again, with backoff."""
        ...
