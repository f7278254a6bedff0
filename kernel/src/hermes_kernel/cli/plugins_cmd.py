"""``hermes plugins``: list, inspect, enable and disable installed plugins.

These four need nothing but the kernel, so a broken installation can always be looked at and
repaired. The group takes plugins' subcommands (``CommandSpec(name="plugins.NAME")``): the
plugin manager's ``install``, ``uninstall``, ``upgrade``, ``catalog`` ... join it that way."""

from __future__ import annotations

import json

import click

from hermes_kernel.cli.main import HermesGroup, app_of
from hermes_kernel.plugins.rows import PluginRow, describe_last_load, plugin_rows
from hermes_kernel.plugins.status_cache import read_status


@click.group(cls=HermesGroup)
def plugins() -> None:
    """List, inspect, enable and disable plugins."""


def _state_text(row: PluginRow) -> str:
    if row.state == "disabled":
        return f"disabled ({row.reason})"
    if row.state == "loaded":
        return f"ok, {row.load_ms:g} ms"
    return row.state


def _notes(row: PluginRow) -> list[str]:
    notes = []
    if row.state == "failed":
        notes.append(f"failed: {row.error}")
    notes += [f"warning: {w}" for w in row.warnings]
    notes += [f"problem: {p}" for p in row.problems if p != row.error]
    if row.state == "enabled" and row.last_load and not row.last_load.get("ok"):
        notes.append(describe_last_load(row.last_load) + "; re-check with --verify")
    if row.isolated and row.enabled:
        notes.append(f"isolated (plugins.isolated): {row.host}")
    if row.run_time and not row.run_time.startswith("isolated; its host ran without"):
        notes.append(f"at run time: {row.run_time}")
    if not row.has_manifest and row.enabled and not row.origin:
        notes.append("no hermes.provides manifest: imported whenever any capability is looked up")
    return notes


def _print_table(rows: list[PluginRow]) -> None:
    if not rows:
        click.echo("No plugins are installed. Hermes runs, but can do little: install a plugin")
        click.echo("distribution (pip install hermes-plugin-NAME) or the standard bundle.")
        return
    headers = ("NAME", "STATE", "VERSION", "DISTRIBUTION", "PROVIDES")
    table = [
        (
            r.name,
            _state_text(r),
            r.version,
            r.distribution,
            ", ".join(r.provides if r.provides is not None else r.declares) or "-",
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in table)) for i, h in enumerate(headers[:-1])]
    for line, row in zip([headers, *table], [None, *rows], strict=True):
        cells = [cell.ljust(width) for cell, width in zip(line[:-1], widths, strict=True)]
        click.echo("  ".join([*cells, line[-1]]).rstrip())
        origin = [f"from {row.origin}"] if row is not None and row.origin else []
        for note in origin + (_notes(row) if row is not None else []):
            click.echo(f"    {note}")


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@click.option("--verify", is_flag=True, help="Import every enabled plugin to check that it loads.")
@click.pass_context
def list_plugins(ctx: click.Context, as_json: bool, verify: bool) -> None:
    """Show installed plugins from metadata, without importing them (unless --verify)."""
    app = app_of(ctx)
    app.rescan = verify
    host = app.host
    host.find_foreign(None)
    if verify:
        host.report_failures = False  # the table reports them
        host.load_all()
    rows = plugin_rows(host, read_status(app.settings.home))
    if as_json:
        click.echo(json.dumps([row.as_json() for row in rows], indent=2))
    else:
        _print_table(rows)


@plugins.command("info")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
@click.option(
    "--verify", is_flag=True, help="Import the plugin to check it and list what it registers."
)
@click.pass_context
def info(ctx: click.Context, name: str, as_json: bool, verify: bool) -> None:
    """Show one plugin: where it comes from, what it declares, and its load state."""
    app = app_of(ctx)
    app.rescan = verify
    host = app.host
    host.find_configured()  # the foreign names config.yaml gives decide what is enabled
    if host.record(name) is None:  # not a Hermes plugin: perhaps a foreign one
        host.find_foreign(frozenset({name}))
    record = host.record(name)
    if record is None:
        raise click.ClickException(f"no installed plugin named {name!r}; see: hermes plugins list")
    if verify and host.decision(name).enabled:
        host.report_failures = False
        host.load(name)
    row = next(r for r in plugin_rows(host, read_status(app.settings.home)) if r.name == name)
    if as_json:
        click.echo(json.dumps(row.as_json(), indent=2))
        return
    click.echo(f"{row.name}: {row.summary}" if row.summary else row.name)
    fields = [("origin", row.origin)] if row.origin else []
    fields += [("distribution", f"{row.distribution} {row.version}")]
    if not row.origin:  # a foreign plugin is built by its source: its origin says it all
        fields.append(("registers", row.target))
    nothing = (
        "nothing known before it loads" if row.origin else "nothing (no hermes.provides manifest)"
    )
    fields += [
        ("state", _state_text(row)),
        ("decided by", row.reason),
        ("declares", ", ".join(row.declares) or nothing),
    ]
    if row.provides is not None:
        fields.append(("provides", ", ".join(row.provides) or "nothing"))
    if row.last_load:
        fields.append(("last load", describe_last_load(row.last_load)))
    for label, value in fields:
        click.echo(f"  {label + ':':<13} {value}")
    for note in _notes(row):
        click.echo(f"  {note}")
    if verify and not row.enabled:
        click.echo(
            f"  not verified: the plugin is disabled; enable it with: hermes plugins enable {name}"
        )


def _set_enabled(ctx: click.Context, name: str, enabled: bool) -> None:
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.runtime.plugin_toggle import toggle_plugin

    try:
        lines = toggle_plugin(app_of(ctx), name, enabled)
    except ConfigError as exc:
        raise click.ClickException("; ".join(exc.problems)) from None
    for line in lines.splitlines():
        click.echo(line)


@plugins.command("enable")
@click.argument("name")
@click.pass_context
def enable(ctx: click.Context, name: str) -> None:
    """Allow plugin NAME to load (edits plugins.enabled/disabled in config.yaml)."""
    _set_enabled(ctx, name, True)


@plugins.command("disable")
@click.argument("name")
@click.pass_context
def disable(ctx: click.Context, name: str) -> None:
    """Stop plugin NAME from loading (adds it to plugins.disabled in config.yaml)."""
    _set_enabled(ctx, name, False)
