"""The administration facet (:class:`~hermes_sdk.administration.RuntimeAdministration`) as
the kernel serves it: config.yaml's sections and changes, .env's secrets, the logs, the
profiles, which plugins load, and the dashboard's panels. Blocking work runs in a thread;
every refusal is ValueError with one line."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from hermes_kernel.config.errors import ConfigError
from hermes_sdk import DashboardPanelSpec, Kind
from hermes_sdk.administration import (
    ConfigChange,
    ConfigSection,
    LogRead,
    ProfileEntry,
    SecretEntry,
)
from hermes_sdk.dashboard import Panel, PanelContext, PanelInfo

if TYPE_CHECKING:
    from hermes_kernel.app import App
    from hermes_sdk.runtime import Runtime

__all__ = ["Administration", "masked"]

ENV_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def masked(value: str) -> str:
    """A secret as a page may show it: its last four characters, when it is long enough
    (an API key) that they give nothing away; a password shows nothing."""
    if not value:
        return "(empty)"
    return f"…{value[-4:]} ({len(value)} characters)" if len(value) >= 32 else "•••••"


class LiveSecrets(Mapping[str, str]):
    """The environment's values over .env's, read again when .env changes: a panel sees a
    key set on the Settings page without a restart."""

    def __init__(self, dotenv: Path, environ: Mapping[str, str]) -> None:
        self.dotenv = dotenv
        self.environ = environ
        self._read: tuple[float, dict[str, str]] | None = None

    def _values(self) -> dict[str, str]:
        from hermes_commons.dotenv import read_dotenv

        try:
            stamp = self.dotenv.stat().st_mtime
        except OSError:
            stamp = 0.0
        if self._read is None or self._read[0] != stamp:
            try:
                values = read_dotenv(self.dotenv)
            except ValueError:  # a broken .env: what the environment has
                values = {}
            self._read = (stamp, {**values, **{k: v for k, v in self.environ.items() if v}})
        return self._read[1]

    def __getitem__(self, name: str) -> str:
        return self._values()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())


class Administration:
    """What the runtime ``runtime`` of ``app`` lets a front-end change of the home."""

    def __init__(self, app: App, runtime: Runtime) -> None:
        self.app = app
        self.runtime = runtime
        self._panels: dict[str, Panel] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    # --- config.yaml ------------------------------------------------------------------------

    async def config_sections(self) -> list[ConfigSection]:
        return await asyncio.to_thread(self._config_sections)

    async def read_config(self) -> dict[str, Any]:
        return await asyncio.to_thread(self._read_config)

    def _read_config(self) -> dict[str, Any]:
        import yaml

        path = self.app.settings.config_path
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
        except (OSError, yaml.YAMLError) as exc:
            problem = " ".join(str(exc).split())
            raise ValueError(f"{path}: cannot read: {problem}; fix it by hand first") from None
        return raw if isinstance(raw, dict) else {}

    def _config_sections(self) -> list[ConfigSection]:
        from pydantic import BaseModel

        from hermes_kernel.config.fields import plain, section_fields
        from hermes_kernel.config.model import KernelConfig

        raw = self._read_config()
        sections = []
        for name, info in KernelConfig.model_fields.items():
            model = info.annotation
            if isinstance(model, type) and issubclass(model, BaseModel):
                fields = section_fields(name, model, raw.get(name))
            else:
                fields = section_fields(
                    "", _single(name, info), {name: raw[name]} if name in raw else {}
                )
            sections.append(
                ConfigSection(
                    name=name,
                    description=plain(
                        (model.__doc__ or "").strip().split("\n\n")[0]
                        if isinstance(model, type) and issubclass(model, BaseModel)
                        else info.description or ""
                    ),
                    owner="kernel",
                    fields=fields,
                )
            )
        for item in self.app.host.provided(Kind.CONFIG):
            spec = item.spec
            try:
                model_class = spec.model_class()  # type: ignore[attr-defined]  # ConfigSectionSpec
                fields = section_fields(spec.name, model_class, raw.get(spec.name))
                problems: tuple[str, ...] = ()
            except Exception as exc:  # noqa: BLE001 - a plugin's model that fails: said, not fatal
                fields, problems = (), (f"its model cannot be read: {exc}",)
            sections.append(
                ConfigSection(
                    name=spec.name,
                    description=getattr(spec, "description", "") or "",
                    owner=item.plugin,
                    fields=fields,
                    problems=problems,
                )
            )
        return sections

    async def change_config(self, changes: Mapping[str, str | None], *, save: bool) -> ConfigChange:
        from hermes_kernel.runtime.config_change import change_config

        return await asyncio.to_thread(change_config, self.app, dict(changes), save=save)

    # --- .env -------------------------------------------------------------------------------

    async def secrets(self) -> list[SecretEntry]:
        from hermes_commons.dotenv import read_dotenv

        dotenv = await asyncio.to_thread(read_dotenv, self.app.settings.home / ".env")
        return [
            SecretEntry(name=name, shown=masked(value), source=".env")
            for name, value in sorted(dotenv.items())
        ]

    async def set_secret(self, name: str, value: str) -> str:
        from hermes_commons.dotenv import set_dotenv_value

        if not name or not set(name) <= ENV_NAME_CHARS or name[0].isdigit():
            # Not echoed: a secret pasted into the name's box must not reach a page or a log.
            raise ValueError("that is not a variable name: use A-Z, 0-9 and _ (MY_SERVICE_KEY)")
        if not value or "\n" in value or "\r" in value:
            raise ValueError("a secret is one line of text: paste it again")
        path = self.app.settings.home / ".env"
        await asyncio.to_thread(set_dotenv_value, path, name, value)
        self.app.remember_secret(value)  # redacted from the logs from now on
        return f"{name} saved in {path} (mode 0600); a restart of what reads it applies it"

    # --- logs -------------------------------------------------------------------------------

    def log_names(self) -> list[str]:
        from hermes_kernel.log import LOG_NAMES
        from hermes_kernel.runtime.log_reading import log_names

        names = log_names(self.app.settings.home / "logs", LOG_NAMES)
        own = self.app.log_name  # this process's own log first: what a page shows first
        return [own, *(name for name in names if name != own)] if own in names else names

    async def read_log(
        self,
        name: str,
        cursor: str = "",
        *,
        level: str = "",
        component: str = "",
        limit: int = 200,
    ) -> LogRead:
        from hermes_commons.redact import redact_text
        from hermes_kernel.runtime.log_reading import LEVELS, AtLeast, read_after

        if name not in self.log_names():
            raise ValueError(f"no log named {name!r} (logs: {', '.join(self.log_names())})")
        wanted_level = level.upper() or "DEBUG"
        if wanted_level not in LEVELS:
            raise ValueError(f"level {level!r}: use one of {', '.join(LEVELS).lower()}")
        wanted = AtLeast(LEVELS.index(wanted_level), component.strip())
        path = self.app.settings.home / "logs" / f"{name}.log"
        records, after = await asyncio.to_thread(
            read_after, path, cursor, wanted, max(1, min(limit, 1000))
        )
        from hermes_commons.dotenv import read_dotenv

        try:  # .env as it is now: a key set since the start is redacted too
            dotenv = await asyncio.to_thread(read_dotenv, self.app.settings.home / ".env")
        except ValueError:
            dotenv = {}
        secrets = [*self.app.settings.secrets.values(), *(v for v in dotenv.values() if v)]
        return LogRead(
            lines=tuple((redact_text(r.text, secrets), r.level, r.component) for r in records),
            cursor=after,
        )

    # --- profiles ---------------------------------------------------------------------------

    def _base(self) -> Path:
        from hermes_kernel.config.home import base_home

        return base_home(self.app.flags.home, os.environ)

    async def profiles(self) -> list[ProfileEntry]:
        from hermes_kernel.config.home import chosen_profile
        from hermes_kernel.config.profiles import home_of, profile_names

        base = self._base()
        sticky, _ = chosen_profile(base, None, {})
        here = self.app.settings.home.resolve()
        return [
            ProfileEntry(
                name=name,
                home=str(home_of(base, name)),
                active=name == sticky,
                current=home_of(base, name).resolve() == here,
            )
            for name in await asyncio.to_thread(profile_names, base)
        ]

    async def create_profile(self, name: str, *, clone: bool) -> str:
        from hermes_kernel.config.profiles import create_profile

        try:
            return await asyncio.to_thread(
                create_profile, self._base(), name, self.app.settings.home, clone=clone
            )
        except ConfigError as exc:
            raise ValueError(exc.problems[0]) from None

    async def use_profile(self, name: str) -> str:
        from hermes_kernel.config.profiles import use_profile

        try:
            line = await asyncio.to_thread(use_profile, self._base(), name)
        except ConfigError as exc:
            raise ValueError(exc.problems[0]) from None
        return f"{line}; later hermes commands use it (this one keeps its home)"

    # --- plugins ----------------------------------------------------------------------------

    async def set_plugin_enabled(self, name: str, enabled: bool) -> str:
        from hermes_kernel.runtime.plugin_toggle import toggle_plugin

        try:
            return await asyncio.to_thread(toggle_plugin, self.app, name, enabled)
        except ConfigError as exc:
            raise ValueError("; ".join(exc.problems)) from None

    # --- panels -----------------------------------------------------------------------------

    async def panels(self) -> list[PanelInfo]:
        provided = await asyncio.to_thread(self.app.host.provided, Kind.PANEL)
        found = []
        for item in provided:
            spec = cast("DashboardPanelSpec", item.spec)
            found.append(
                PanelInfo(
                    name=spec.name,
                    title=spec.title,
                    description=spec.description,
                    plugin=item.plugin,
                    order=spec.order,
                )
            )
        return sorted(found, key=lambda info: (info.order, info.name))

    async def panel(self, name: str) -> Panel:
        built = self._panels.get(name)
        if built is not None:
            return built
        lock = self._locks.setdefault(name, asyncio.Lock())  # one panel's slow build is its own
        async with lock:
            built = self._panels.get(name)
            if built is not None:
                return built
            provided = await asyncio.to_thread(self.app.host.require, Kind.PANEL, name)
            if provided is None:
                known = ", ".join(info.name for info in await self.panels()) or "none"
                raise KeyError(f"no dashboard panel named {name!r} (panels: {known})")
            spec = cast("DashboardPanelSpec", provided.spec)
            settings = self.app.settings
            context = PanelContext(
                home=str(settings.home),
                config=settings.raw,
                secrets=LiveSecrets(settings.home / ".env", settings.environ),
                runtime=self.runtime,
                provided=self.app.host.shared(lazily=True),
            )
            built = await asyncio.to_thread(spec.build, context)
            if not isinstance(built, Panel):
                raise KeyError(f"panel {name!r} of plugin {provided.plugin!r} is not a Panel")
            self._panels[name] = built
            return built


_SINGLES: dict[str, type[Any]] = {}


def _single(name: str, info: Any) -> type[Any]:
    """A one-field model for a top-level setting that is not a section (``providers``),
    made once per name."""
    from pydantic import create_model

    made = _SINGLES.get(name)
    if made is None:
        make = cast("Any", create_model)  # its overloads cannot type fields named at run time
        made = _SINGLES[name] = cast("type[Any]", make("One", **{name: (info.annotation, info)}))
    return made
