"""``plugin-manager``: plugin distribution, the commands that change which plugins are
installed. ``hermes plugins install | uninstall | upgrade`` show what a change brings, ask,
then install, verify (every new plugin loads, in a fresh process) or roll back;
``hermes plugins catalog | validate | outdated`` read the curated catalog; ``hermes update``
moves everything to the catalog's newest compatible releases.

Its commands join the kernel's ``hermes plugins`` group (``CommandSpec`` named
``plugins.NAME``), whose own ``list | info | enable | disable`` keep working without it.
Importing this is cheap: click, pydantic and the installer code load when a command runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hermes_sdk import CommandSpec, DashboardPanelSpec, hookimpl

_COMMANDS: dict[str, tuple[str, str]] = {
    # spec name -> (module:attribute, description)
    "plugins.install": (
        "install_cmd:install",
        "Install plugins: show what they bring, install, verify, or roll back.",
    ),
    "plugins.uninstall": (
        "install_cmd:uninstall",
        "Remove the distributions that provide the named plugins.",
    ),
    "plugins.upgrade": (
        "install_cmd:upgrade",
        "Upgrade plugins: to the catalog's pin, their git ref's head, or the newest release.",
    ),
    "plugins.catalog": (
        "catalog_cmd:catalog",
        "List or search the plugins in the catalog.",
    ),
    "plugins.validate": (
        "catalog_cmd:validate",
        "Check catalog entries: their schema, and that each plugin registers what it declares.",
    ),
    "plugins.outdated": (
        "catalog_cmd:outdated",
        "Installed plugins whose catalog entry pins another version.",
    ),
    "update": (
        "update_cmd:update",
        "Move plugins (and Hermes) to the catalog's newest releases; verified or rolled back.",
    ),
}


def _factory(target: str) -> Callable[[], Any]:
    def build() -> Any:
        import importlib

        module, _, attribute = target.partition(":")
        return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)

    return build


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    for name, (target, description) in _COMMANDS.items():
        yield CommandSpec(name=name, description=description, factory=_factory(target))


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="catalog",
        title="Catalog",
        description="Plugins to install from the catalog: checked, verified, or rolled back.",
        factory="hermes_plugin_plugin_manager.panel:CatalogPanel",
        order=95,
    )
