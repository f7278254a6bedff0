"""``hermes import SOURCE [PATH] [--yes] [--dry-run] [--details] [--json]``: bring another
tool's home into this one through the importer a plugin yields for SOURCE
(``hermes_importers``). The flow is the same for every importer: check the source, show what
would come over and ask (or ``--yes``), import, report. What each plugin keeps in a home it
brings over itself (``hermes_import_home``), through ``ImportRequest.import_parts``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_kernel.cli.main import app_of
from hermes_sdk import ImporterSpec
from hermes_sdk.importing import (
    HomeImport,
    ImportedHome,
    Importer,
    ImportRefused,
    ImportRequest,
    ImportSection,
)

if TYPE_CHECKING:
    from hermes_kernel.app import App


def render(homes: list[ImportedHome], dry_run: bool, details: bool) -> list[str]:
    """The report as lines: counts first, then what was left and why (always), and with
    ``details`` every item that came over."""
    verb = "would come over" if dry_run else "came over"
    lines: list[str] = []
    for home in homes:
        title = f"profile {home.profile}" if home.profile else "home"
        lines.append(f"{title}: {home.source} -> {home.target}")
        for section in home.sections:
            if not (section.imported or section.already or section.left_out or section.notes):
                continue
            counts = [f"{section.imported} {verb}"]
            if section.already:
                counts.append(f"{len(section.already)} already here")
            if section.left_out:
                counts.append(f"{len(section.left_out)} left")
            lines.append(f"  {section.kind}: {', '.join(counts)}")
            if details:
                lines += [f"    + {what}" for what in section.added]
                lines += [f"    = {what}: {why}" for what, why in section.already]
            lines += [f"    - {what}: {why}" for what, why in section.left_out]
            lines += [f"    note: {note}" for note in section.notes]
    return lines


def _installed(specs: list[ImporterSpec]) -> str:
    listed = [f"{s.name} ({s.description})" if s.description else s.name for s in specs]
    return ", ".join(listed) or "none"


def _choose(app: App, source: str | None) -> ImporterSpec:
    """The importer named ``source``; otherwise one line naming the installed ones."""
    from hermes_kernel.cli.overview import install_hint
    from hermes_sdk import Kind

    host = app.host
    if source is not None:
        provided = host.require(Kind.IMPORTER, source)
        if provided is not None and isinstance(provided.spec, ImporterSpec):
            return provided.spec
    specs = sorted(host.importers(), key=lambda spec: spec.name)
    if not specs:
        raise click.ClickException(
            f"no importer is installed: {install_hint(Kind.IMPORTER, 'an importer')}"
        )
    if source is None:
        raise click.ClickException(f"name what to import from; installed: {_installed(specs)}")
    hint = ""
    if Path(source).expanduser().is_dir():
        found = [s.name for s in specs if _build(s).detect(Path(source).expanduser())]
        if found:
            hint = f" (that folder is a {found[0]} home: hermes import {found[0]} {source})"
    raise click.ClickException(f"no importer for {source!r}; installed: {_installed(specs)}{hint}")


def _build(spec: ImporterSpec) -> Importer:
    try:
        built: Importer = spec.build()
    except Exception as exc:
        raise click.ClickException(
            f"importer {spec.name!r} failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    return built


def _parts(app: App) -> Callable[[HomeImport], list[ImportSection]]:
    """``ImportRequest.import_parts``: every plugin's sections of one home, sorted by plugin
    name (so a report reads the same every run); a failed plugin is a section naming it."""

    def import_parts(request: HomeImport) -> list[ImportSection]:
        sections: list[ImportSection] = []
        for plugin, answer in sorted(app.host.import_home(request), key=lambda a: a[0]):
            if isinstance(answer, str):
                failed = ImportSection(kind=f"plugin {plugin}")
                failed.left("its part of the home", f"it failed: {answer}; import again later")
                sections.append(failed)
            else:
                sections += answer
        return sections

    return import_parts


@click.command(name="import")
@click.argument("source", required=False)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--yes", "-y", is_flag=True, help="Import without asking first.")
@click.option("--dry-run", is_flag=True, help="Show what would come over; change nothing.")
@click.option("--details", is_flag=True, help="List every item, not only the counts.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--include-sign-ins",
    is_flag=True,
    help="Bring the other tool's sign-ins (OAuth tokens) over too; they are yours.",
)
@click.pass_context
def import_home(
    ctx: click.Context,
    source: str | None,
    path: Path | None,
    yes: bool,
    dry_run: bool,
    details: bool,
    as_json: bool,
    include_sign_ins: bool,
) -> None:
    """Bring another tool's home (PATH, or where that tool keeps it) into this one, through
    the importer named SOURCE (hermes import with no SOURCE lists them). The other home is
    only read; run it again later and only what is new comes over."""
    from hermes_kernel.cli.main import command_archive

    app = app_of(ctx)
    spec = _choose(app, source)
    importer = _build(spec)
    if path is None and not spec.default_path:
        raise click.ClickException(f"give the folder to import: hermes import {spec.name} PATH")
    origin = (path if path is not None else Path(spec.default_path)).expanduser()
    target = Path(app.settings.home)
    import_parts = _parts(app)

    def run(trial: bool) -> list[ImportedHome]:
        request = ImportRequest(
            source=origin,
            target=target,
            dry_run=trial,
            open_archive=lambda home: command_archive(app, home),
            import_parts=import_parts,
            include_sign_ins=include_sign_ins,
        )
        try:
            return importer.run(request)
        except (ImportRefused, OSError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None

    try:
        importer.check(origin, target)
    except ImportRefused as exc:
        raise click.ClickException(str(exc)) from None
    if not dry_run and not yes and as_json:
        raise click.ClickException("nothing was imported: --json needs --yes (or --dry-run)")
    if not dry_run and not yes:
        for line in render(run(trial=True), dry_run=True, details=details):
            click.echo(line)
        if not sys.stdin.isatty():
            raise click.ClickException("nothing was imported: add --yes to import without asking")
        click.confirm(f"Bring this into {target}?", abort=True)
    reports = run(trial=dry_run)
    if as_json:
        click.echo(
            json.dumps({"dry_run": dry_run, "homes": [r.as_json() for r in reports]}, indent=2)
        )
        return
    for line in render(reports, dry_run=dry_run, details=details):
        click.echo(line)
    if dry_run:
        click.echo("Nothing was changed (--dry-run). Run it without --dry-run to import.")
    else:
        click.echo(f"Done. {origin} is as it was. Try: hermes sessions list")
