"""The administration facet on the kernel's runtime: each method hands over to one
:class:`~hermes_kernel.runtime.administration.Administration`, imported and made on first
use, so a runtime that never administers (a one-shot chat) imports none of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from hermes_sdk.runtime import RuntimeAdministration

if TYPE_CHECKING:
    from hermes_kernel.app import App
    from hermes_kernel.runtime.administration import Administration
    from hermes_sdk.administration import (
        ConfigChange,
        ConfigSection,
        LogRead,
        ProfileEntry,
        SecretEntry,
    )
    from hermes_sdk.dashboard import Panel, PanelInfo
    from hermes_sdk.runtime import Runtime

__all__ = ["AdministrationFacet"]


class AdministrationFacet(RuntimeAdministration):
    """Mixed into the kernel's runtime (it has ``app``)."""

    app: App
    _administration: Administration | None = None

    def _admin(self) -> Administration:
        if self._administration is None:
            from hermes_kernel.runtime.administration import Administration

            self._administration = Administration(self.app, cast("Runtime", self))
        return self._administration

    async def config_sections(self) -> list[ConfigSection]:
        return await self._admin().config_sections()

    async def read_config(self) -> dict[str, Any]:
        return await self._admin().read_config()

    async def change_config(self, changes: Mapping[str, str | None], *, save: bool) -> ConfigChange:
        return await self._admin().change_config(changes, save=save)

    async def secrets(self) -> list[SecretEntry]:
        return await self._admin().secrets()

    async def set_secret(self, name: str, value: str) -> str:
        return await self._admin().set_secret(name, value)

    def log_names(self) -> list[str]:
        return self._admin().log_names()

    async def read_log(
        self,
        name: str,
        cursor: str = "",
        *,
        level: str = "",
        component: str = "",
        limit: int = 200,
    ) -> LogRead:
        return await self._admin().read_log(
            name, cursor, level=level, component=component, limit=limit
        )

    async def profiles(self) -> list[ProfileEntry]:
        return await self._admin().profiles()

    async def create_profile(self, name: str, *, clone: bool) -> str:
        return await self._admin().create_profile(name, clone=clone)

    async def use_profile(self, name: str) -> str:
        return await self._admin().use_profile(name)

    async def set_plugin_enabled(self, name: str, enabled: bool) -> str:
        return await self._admin().set_plugin_enabled(name, enabled)

    async def panels(self) -> list[PanelInfo]:
        return await self._admin().panels()

    async def panel(self, name: str) -> Panel:
        return await self._admin().panel(name)
