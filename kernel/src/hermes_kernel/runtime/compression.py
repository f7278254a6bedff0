"""What a chat process compacts with: the context engine named by ``compression.engine`` and
the model its summaries come from (``auxiliary:``, else the session's own). Both are built on
the first compaction, so a chat that never compacts never imports them; each failure is one
warning, and summaries are then written without that part."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hermes_kernel.engine.compaction import Compactor, CompressionSettings
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.engine.summaries import SummaryModel
from hermes_kernel.providers.routing import NoModel, model_setup, pricing
from hermes_sdk import ContextEngineSpec, Kind
from hermes_sdk.context import ContextEngine, ContextEngineContext

if TYPE_CHECKING:
    from hermes_kernel.config.settings import Settings
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["Compression"]

log = logging.getLogger("hermes.compaction")


class Compression:
    """One per chat process; :meth:`compactor` gives each turn engine its own (windows are
    per model) sharing the engine and the summary model's cooling."""

    def __init__(self, host: PluginHost, configured: Settings) -> None:
        self.host = host
        self.configured = configured
        self.settings = CompressionSettings.from_config(configured.raw)
        self._engine: ContextEngine | None = None
        self._engine_tried = False
        self._auxiliary: ModelRoute | None = None
        self._auxiliary_tried = False
        self.summary_model = SummaryModel(self.auxiliary, pricing(host))

    def compactor(self, read_only: Callable[[str], bool]) -> Compactor:
        return Compactor(self.settings, self.summary_model, self.context_engine, read_only)

    def context_engine(self) -> tuple[ContextEngine | None, str | None]:
        """The configured engine and, the first time it cannot be had, why."""
        if self._engine_tried:
            return self._engine, None
        self._engine_tried = True
        name = self.settings.engine
        provided = self.host.require(Kind.CONTEXT_ENGINE, name)
        if provided is None:
            known = ", ".join(p.spec.name for p in self.host.provided(Kind.CONTEXT_ENGINE))
            return None, (
                f"context engine {name!r} is not installed (installed: {known or 'none'}); "
                "summaries are written without a model until compression.engine names one"
            )
        spec = provided.spec
        assert isinstance(spec, ContextEngineSpec)
        section = self.configured.raw.get("compression")
        context = ContextEngineContext(
            home=str(self.configured.home),
            config=section if isinstance(section, Mapping) else {},
        )
        try:
            engine = spec.build(context)
        except Exception as exc:  # noqa: BLE001 - a broken engine costs its summaries only
            return None, f"context engine {name!r} failed to start: {exc}"
        if not isinstance(engine, ContextEngine):
            return None, f"context engine {name!r} did not return a ContextEngine"
        self._engine = engine
        return engine, None

    def auxiliary(self) -> ModelRoute | None:
        """The ``auxiliary:`` model, None when it is not set or cannot be used (said once
        in the log: summaries then use the session's model)."""
        if self._auxiliary_tried:
            return self._auxiliary
        self._auxiliary_tried = True
        section = self.configured.raw.get("auxiliary")
        if not isinstance(section, Mapping) or not (
            section.get("provider") or section.get("model")
        ):
            return None
        try:
            setup = model_setup(
                self.host, self.configured, section.get("provider"), section.get("model")
            )
        except NoModel as exc:
            log.warning("the auxiliary model cannot be used (%s); using the session's", exc)
            return None
        self._auxiliary = setup.routes[0]
        return self._auxiliary

    async def aclose(self) -> None:
        if self._auxiliary is not None:
            with contextlib.suppress(Exception):  # closing a client must not fail an exit
                await self._auxiliary.provider.aclose()
