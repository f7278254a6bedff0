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

import asyncio
import contextlib
import signal
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_sdk.runtime import Runtime

__all__ = ["Service", "ServiceContext", "ServiceNotConfigured", "serve_in_foreground"]


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


async def serve_in_foreground(
    service: Service,
    open_runtime: Callable[[], AbstractAsyncContextManager[Runtime]],
    ready: asyncio.Event,
    *,
    where: str,
    on_ready: Callable[[], None],
) -> None:
    """Run ``service`` alone, as a plugin's own command does (``hermes serve``, ``hermes
    web``), until SIGTERM or SIGINT; then stop it and close the runtime. ``ready`` is the
    event the service sets once it listens; ``on_ready`` is called then (say where it is).
    A service that fails before it is ready because it cannot listen (a port in use, an
    address not of this machine) raises :class:`ServiceNotConfigured`, one line naming
    ``where``; anything else it raises propagates."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    async with open_runtime() as runtime:
        serving = asyncio.ensure_future(service.run(runtime))
        listening = asyncio.ensure_future(ready.wait())
        await asyncio.wait({serving, listening}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done():
            listening.cancel()
            try:
                serving.result()
            except OSError as exc:
                reason = exc.strerror or exc
                raise ServiceNotConfigured(f"cannot listen on {where}: {reason}") from None
            return
        on_ready()
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
