"""``hermes plugins catalog [search TERM]``, ``validate`` and ``outdated``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_plugin_plugin_manager import context

if TYPE_CHECKING:
    from hermes_plugin_plugin_manager.catalog import Catalog, CatalogEntry


def _load(catalog_dir: str | None) -> Catalog:
    from hermes_plugin_plugin_manager.catalog import CatalogError, catalog_folder, load_catalog

    try:
        return load_catalog(catalog_folder(catalog_dir))
    except CatalogError as exc:
        raise click.ClickException(str(exc)) from None


def _print_entries(entries: list[CatalogEntry], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return
    if not entries:
        click.echo("no catalog entry matches")
        return
    width = max(len(e.name) for e in entries)
    for entry in entries:
        click.echo(f"{entry.name:<{width}}  {entry.version:<8} {entry.tier:<9} {entry.description}")
        click.echo(f"{'':<{width}}  provides {', '.join(entry.kinds)}: {', '.join(entry.provides)}")


@click.group("catalog", invoke_without_command=True)
@click.option("--catalog", "catalog_dir", metavar="DIR", help="The plugin catalog folder.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def catalog(ctx: click.Context, catalog_dir: str | None, as_json: bool) -> None:
    """List the plugins in the catalog (install one with: hermes plugins install NAME)."""
    ctx.obj = {"catalog_dir": catalog_dir, "json": as_json}
    if ctx.invoked_subcommand is None:
        listing = _load(catalog_dir)
        _print_entries(listing.search(None), as_json)
        if not as_json and listing.bundles:
            click.echo("")
            for name, bundle in sorted(listing.bundles.items()):
                click.echo(f"bundle {name}: {bundle.description}")


@catalog.command("search")
@click.argument("term")
@click.pass_context
def search(ctx: click.Context, term: str) -> None:
    """Catalog entries whose name, description or what they provide mention TERM."""
    options = ctx.obj or {}
    _print_entries(_load(options.get("catalog_dir")).search(term), bool(options.get("json")))


def _entries_to_check(target: str, catalog_dir: str | None) -> list[CatalogEntry]:
    from hermes_plugin_plugin_manager.catalog import CatalogError, load_catalog, read_entry

    path = Path(target)
    try:
        if path.is_file():
            return [read_entry(path)]
        if path.is_dir():
            return list(load_catalog(path).entries.values())
    except CatalogError as exc:
        raise click.ClickException(str(exc)) from None
    entry = _load(catalog_dir).find(target)
    if entry is None:
        raise click.ClickException(f"{target}: no such entry file, catalog folder or entry name")
    return [entry]


def _problems(entry: CatalogEntry) -> list[str]:
    """How the installed plugin differs from its entry (installed here, and loaded)."""
    from importlib import metadata

    from hermes_plugin_plugin_manager.catalog import PyPISource
    from hermes_plugin_plugin_manager.environment import Environment, InstallerError
    from hermes_plugin_plugin_manager.transaction import verify

    try:
        dist = metadata.distribution(entry.package)
    except metadata.PackageNotFoundError:
        return [
            f"{entry.package} is not installed here, so what it registers cannot be checked; "
            "install it (hermes plugins install PATH) and validate again"
        ]
    problems = []
    if isinstance(entry.source, PyPISource) and dist.version != entry.source.version:
        problems.append(f"installed {dist.version}, the entry pins {entry.source.version}")
    names = sorted(ep.name for ep in dist.entry_points if ep.group == "hermes.plugins")
    if entry.name not in names:
        problems.append(f"{entry.package} registers plugins {names}, not {entry.name!r}")
        return problems
    try:
        verified = verify(Environment.current(), context.home(), {dist.name})
    except InstallerError as exc:
        return [*problems, str(exc)]
    row = verified.plugins.get(entry.name, {})
    if row.get("state") != "loaded":
        problems.append(f"it does not load: {row.get('error') or row.get('state')}")
        return problems
    registered = sorted(str(item) for item in row.get("provides") or [])  # type: ignore[attr-defined]
    if registered != entry.provides:
        missing = sorted(set(entry.provides) - set(registered))
        extra = sorted(set(registered) - set(entry.provides))
        problems.append(
            "what it registers differs from the entry's provides:"
            + (f" not registered: {', '.join(missing)};" if missing else "")
            + (f" not declared: {', '.join(extra)}" if extra else "")
        )
    return problems


@click.command("validate")
@click.argument("target", metavar="ENTRY_OR_PATH")
@click.option("--catalog", "catalog_dir", metavar="DIR", help="The plugin catalog folder.")
@click.option("--schema-only", is_flag=True, help="Check the entry's schema only.")
def validate(target: str, catalog_dir: str | None, schema_only: bool) -> None:
    """Check catalog entries: their schema, and that the plugin registers what they declare."""
    failed = 0
    for entry in _entries_to_check(target, catalog_dir):
        problems = [] if schema_only else _problems(entry)
        if problems:
            failed += 1
            click.echo(f"{entry.name}: FAILED")
            for problem in problems:
                click.echo(f"  {problem}")
        else:
            checked = "schema" if schema_only else "schema, and it registers what it declares"
            click.echo(f"{entry.name}: ok ({checked})")
    if failed:
        raise click.ClickException(f"{failed} entr{'y' if failed == 1 else 'ies'} failed")


@click.command("outdated")
@click.option("--catalog", "catalog_dir", metavar="DIR", help="The plugin catalog folder.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def outdated(catalog_dir: str | None, as_json: bool) -> None:
    """Installed plugins whose catalog entry pins another version."""
    from hermes_plugin_plugin_manager.environment import Environment, normalize
    from hermes_plugin_plugin_manager.upgrades import is_outdated

    listing = _load(catalog_dir)
    installed = Environment.current().snapshot()
    rows = []
    for record in context.installed_plugins():
        dist = installed.get(normalize(record.distribution))
        if dist is None:
            continue
        wanted = is_outdated(dist, listing, record.name)
        if wanted is not None:
            rows.append(
                {"name": record.name, "installed": dist.version, "catalog": wanted,
                 "source": dist.source_text()}
            )  # fmt: skip
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        click.echo("every catalogued plugin is at its catalog version")
    else:
        for row in rows:
            click.echo(f"{row['name']}: {row['installed']} installed, catalog has {row['catalog']}")
        click.echo("upgrade with: hermes plugins upgrade NAME (or --all)")
