"""The agent's media support: the installed transcribers, built once on the first audio a
user sends (so a text-only process never imports them), and the auxiliary model, which
describes images for a model that does not see."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

from hermes_kernel.engine.media import MediaSupport, NamedTranscriber
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.providers.routing import pricing
from hermes_sdk import Kind, TranscriberSpec
from hermes_sdk.transcription import Transcriber, TranscriberContext

if TYPE_CHECKING:
    from hermes_kernel.config.settings import Settings
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["Transcribers", "media_support"]

log = logging.getLogger("hermes.media")


class Transcribers:
    """The installed transcribers in the order they are asked: ``media.transcribers`` first,
    then the rest by name. One that fails to build is left out, with one warning."""

    def __init__(self, host: PluginHost, settings: Settings) -> None:
        self.host = host
        self.settings = settings
        self._built: tuple[NamedTranscriber, ...] | None = None
        self._lock = threading.Lock()

    def __call__(self) -> tuple[NamedTranscriber, ...]:
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built

    def _build(self) -> tuple[NamedTranscriber, ...]:
        settings = self.settings
        specs = {
            spec.name: cast(TranscriberSpec, spec)
            for spec in (p.spec for p in self.host.provided(Kind.TRANSCRIBER))
        }
        section = settings.raw.get("media")
        wanted = section.get("transcribers") if isinstance(section, Mapping) else None
        first = [name for name in wanted or () if isinstance(name, str)]
        for name in first:
            if name not in specs:
                log.warning("media.transcribers names %r, which no plugin provides", name)
        order = [name for name in first if name in specs]
        order += sorted(name for name in specs if name not in order)
        context = TranscriberContext(
            home=str(settings.home), config=settings.raw, secrets=settings.secrets.get
        )
        built: list[NamedTranscriber] = []
        for name in order:
            try:
                transcriber = specs[name].build(context)
            except Exception as exc:  # noqa: BLE001 - a broken transcriber costs only itself
                log.warning("transcriber %r failed to start: %s", name, exc)
                continue
            built.append(NamedTranscriber(name, cast(Transcriber, transcriber)))
        return tuple(built)

    async def aclose(self) -> None:
        for named in self._built or ():
            with contextlib.suppress(Exception):  # closing must not fail an exit
                await asyncio.wait_for(named.transcriber.aclose(), 5)


def media_support(
    host: PluginHost,
    settings: Settings,
    transcribers: Transcribers,
    auxiliary: Callable[[], ModelRoute | None],
) -> MediaSupport:
    return MediaSupport(
        settings.raw,
        transcribers=transcribers,
        describer=auxiliary,
        pricing=pricing(host),
    )
