"""The Catalog page of the dashboard: the plugin catalog with what is installed, and a
plugin installed from it as ``hermes plugins install NAME`` does: its entry checked (hash
pinned, built for this Hermes), what it brings shown first, then installed, verified in a
fresh process, or rolled back. A new plugin stays disabled unless asked; the Plugins page
enables it."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_sdk.dashboard import (
    Button,
    Facts,
    Field,
    Form,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

if TYPE_CHECKING:
    from hermes_plugin_plugin_manager.catalog import Catalog, CatalogEntry
    from hermes_plugin_plugin_manager.targets import Target
    from hermes_plugin_plugin_manager.transaction import Verified

__all__ = ["CatalogPanel"]

_INSTALLING = threading.Lock()
"""One change of the Python environment at a time, whoever waits for it."""


def _installed(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


class CatalogPanel:
    def __init__(self, context: PanelContext) -> None:
        self.home = Path(context.home)
        self.runtime = context.runtime

    def _catalog(self) -> Catalog:
        from hermes_plugin_plugin_manager.catalog import CatalogError, catalog_folder, load_catalog

        try:
            return load_catalog(catalog_folder(None))
        except CatalogError as exc:
            raise PanelError(str(exc)) from None

    async def view(self, query: Mapping[str, str]) -> PanelView:
        return await asyncio.to_thread(self._view, query)

    def _view(self, query: Mapping[str, str]) -> PanelView:
        catalog = self._catalog()
        term = query.get("q", "").strip()
        entries = catalog.search(term or None)
        rows = []
        for entry in entries:
            have = _installed(entry.package)
            buttons = (
                ()
                if have
                else (Button(action="check", label="Install…", values={"name": entry.name}),)
            )
            rows.append(
                Row(
                    cells=(
                        entry.name,
                        entry.tier,
                        have or "-",
                        entry.version or "-",
                        entry.description,
                    ),
                    buttons=buttons,
                    level="ok" if have else None,
                )
            )
        return PanelView(
            sections=(
                Section(
                    title="Find",
                    blocks=(
                        Form(
                            action="search",
                            submit="Search",
                            fields=(
                                Field(
                                    name="q", label="Plugins about", value=term, placeholder="slack"
                                ),
                            ),
                        ),
                    ),
                ),
                Section(
                    title="The catalog",
                    blocks=(
                        Text(
                            text="Each install is checked against the catalog's pinned hash, "
                            "verified in a fresh process, and rolled back when anything fails "
                            "(hermes plugins install). It goes into the Python environment "
                            "Hermes runs in."
                        ),
                        Table(
                            columns=("plugin", "tier", "installed", "catalog", "what it is"),
                            rows=tuple(rows),
                            empty="nothing in the catalog matches",
                        ),
                    ),
                ),
            )
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        if action == "search":
            return Outcome(message="", query={"q": values.get("q", "").strip()})
        name = values.get("name", "").strip()
        if action == "check":
            return await asyncio.to_thread(self._check, name)
        if action == "install":
            return await self._install(name, values.get("enable") == "true")
        raise PanelError(f"no action {action!r} on this page: reload it")

    def _target(self, name: str, work: Path) -> Target:
        from hermes_plugin_plugin_manager.catalog import CatalogError
        from hermes_plugin_plugin_manager.environment import Environment, InstallerError
        from hermes_plugin_plugin_manager.install_cmd import check_compatible
        from hermes_plugin_plugin_manager.targets import resolve_target

        catalog = self._catalog()
        if catalog.find(name) is None:
            raise PanelError(f"no plugin named {name!r} in the catalog")
        try:
            target = resolve_target(name, Environment.current(), work, lambda: catalog)
            check_compatible(target)
        except (InstallerError, CatalogError) as exc:
            raise PanelError(str(exc)) from None
        return target

    def _check(self, name: str) -> Outcome:
        """What installing would bring; nothing changes until the button under it."""
        from hermes_plugin_plugin_manager.environment import Environment, InstallerError

        with tempfile.TemporaryDirectory(prefix="hermes-install-") as work:
            target = self._target(name, Path(work))
            try:
                plan = Environment.current().plan(target.args)
            except InstallerError as exc:
                raise PanelError(str(exc)) from None
        entry: CatalogEntry | None = target.entry
        facts: list[tuple[str, str]] = [
            ("package", f"{target.distribution or target.label} {target.version or ''}".strip()),
            ("from", target.label),
        ]
        if entry is not None:
            facts.append(("catalog", f"{entry.tier}, maintained by {entry.maintainer}"))
            if entry.environment:
                facts.append(("needs", ", ".join(entry.environment) + " (set them in Settings)"))
        facts.append(("provides", ", ".join(target.provides or []) or "unknown until installed"))
        facts.append(("packages", ", ".join(plan) if plan else "nothing new to install"))
        facts += [("note", note) for note in target.notes]
        return Outcome(
            message="check what it brings, then install it",
            view=PanelView(
                sections=(
                    Section(
                        title=f"Install {name}",
                        blocks=(
                            Facts(items=tuple(facts)),
                            Form(
                                action="install",
                                submit="Install",
                                fields=(
                                    Field(name="name", label="", kind="hidden", value=name),
                                    Field(
                                        name="enable",
                                        label="Enable it once installed",
                                        kind="bool",
                                        value="false",
                                    ),
                                ),
                            ),
                        ),
                    ),
                )
            ),
        )

    async def _install(self, name: str, enable: bool) -> Outcome:
        """In a worker thread that goes on to its end even if the page stops waiting (an
        install cut short would leave the environment half changed); enabling or disabling
        what it brought is part of the transaction, as for ``hermes plugins install``."""
        loop = asyncio.get_running_loop()

        def set_enabled(plugin: str, wanted: bool) -> None:
            done = asyncio.run_coroutine_threadsafe(
                self.runtime.set_plugin_enabled(plugin, wanted), loop
            )
            done.result(timeout=60)

        work = asyncio.ensure_future(
            asyncio.to_thread(self._install_here, name, enable, set_enabled)
        )
        lines = await asyncio.shield(work)
        return Outcome(message="; ".join(lines) + " (restart Hermes to load it)")

    def _install_here(
        self, name: str, enable: bool, set_enabled: Callable[[str, bool], None]
    ) -> list[str]:
        from hermes_plugin_plugin_manager.environment import Environment, InstallerError
        from hermes_plugin_plugin_manager.transaction import transaction

        if not _INSTALLING.acquire(blocking=False):
            raise PanelError("another install is running: wait for it to finish")
        lines: list[str] = []

        def settle(verified: Verified, added: set[str]) -> None:
            for plugin, row in sorted(verified.plugins.items()):
                fresh = row.get("distribution") in added
                if fresh or enable:
                    set_enabled(plugin, enable)  # a failure here rolls the install back
                state = "enabled" if enable else ("disabled" if fresh else "kept as it was")
                lines.append(
                    f"{plugin}: installed and verified ({row.get('load_ms')} ms to load); {state}"
                )

        try:
            env = Environment.current()
            with tempfile.TemporaryDirectory(prefix="hermes-install-") as work:
                target = self._target(name, Path(work))
                try:
                    transaction(
                        env,
                        self.home,
                        self.home / "config.yaml",
                        lambda: env.install(target.args, "installing"),
                        settle,
                    )
                except InstallerError as exc:
                    raise PanelError(str(exc)) from None  # it says what was rolled back
        finally:
            _INSTALLING.release()
        return lines or [f"{name}: nothing to install"]
