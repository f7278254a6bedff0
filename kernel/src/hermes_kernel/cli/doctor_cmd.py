"""``hermes doctor``: check the installation; every finding says how to fix it."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_kernel.cli.main import app_of
from hermes_sdk import Finding, HealthContext, Kind

if TYPE_CHECKING:
    from hermes_kernel.config.settings import Settings
    from hermes_kernel.plugins.host import PluginHost
    from hermes_sdk.health import Level


def _finding(level: Level, message: str, fix: str = "") -> Finding:
    return Finding(level=level, message=message, fix=fix)


def _home_findings(home: os.PathLike[str] | str) -> list[Finding]:
    home = Path(home)
    if not home.exists():
        return [
            _finding(
                "warning",
                f"HERMES_HOME {home} does not exist yet",
                f"it is created on first use, or now with: mkdir -p {home}",
            )
        ]
    if not os.access(home, os.W_OK):
        return [
            _finding(
                "error",
                f"HERMES_HOME {home} is not writable",
                f"fix its owner or mode: chown -R $USER {home}",
            )
        ]
    findings = [_finding("ok", f"HERMES_HOME {home}")]
    dotenv = home / ".env"
    if dotenv.exists():
        mode = stat.S_IMODE(dotenv.stat().st_mode)
        if mode & 0o077:
            findings.append(
                _finding(
                    "error",
                    f"{dotenv} holds secrets but is readable by others (mode {mode:o})",
                    f"chmod 600 {dotenv}",
                )
            )
    return findings


def _store_findings(host: PluginHost, settings: Settings) -> list[Finding]:
    """The store opens as ours (another tool's, a damaged one, or none that an installed
    engine can open, is an error)."""
    from hermes_kernel.config.store_location import store_location
    from hermes_kernel.foreign_homes import recognize_home
    from hermes_kernel.plugins.store_engines import NoStoreEngine, open_database, store_exists
    from hermes_kernel.store.errors import ForeignStoreError, StoreError

    home, config = settings.home, settings.document.data
    url = store_location(home, config).url
    try:
        if not store_exists(host, home, config):
            return []
        db = open_database(host, home, config)
        where = db.where
        db.close()
    except NoStoreEngine as exc:
        # Left out by choice in a home kept in itself, a warning (as other missing pieces);
        # a broken install, or store.url naming a database no plugin opens, an error.
        level: Level = "error" if exc.failed or url is not None else "warning"
        return [_finding(level, exc.why, exc.fix)]
    except ForeignStoreError as exc:
        found = recognize_home(home)
        if found is not None:
            return [_finding("error", found.problem, found.fix)]
        return [_finding("error", exc.problem, exc.fix)]
    except StoreError as exc:
        fix = (
            "check store.url and the server"
            if url
            else "move it aside, or restore it from a backup"
        )
        return [_finding("error", str(exc), fix)]
    return [_finding("ok", f"state store {where}")]


def _plugin_findings(host: PluginHost, settings: Settings, online: bool) -> list[Finding]:
    """What each plugin checks of its own part (``hermes_doctor_checks``); a check that
    raised or hung is one error naming the plugin."""
    context = HealthContext(
        home=str(settings.home),
        config=settings.raw,
        secrets=settings.secrets.merged(),
        provided=host.shared(lazily=True),
        online=online,
    )
    findings: list[Finding] = []
    for plugin, answer in host.doctor_checks(context):
        if isinstance(answer, str):
            findings.append(
                _finding(
                    "error",
                    f"plugin {plugin!r}: its doctor checks failed: {answer}",
                    "report it to the plugin's author, or: hermes plugins disable " + plugin,
                )
            )
        else:
            findings += answer
    return findings


def collect_findings(ctx: click.Context, online: bool = False) -> list[Finding]:
    from hermes_kernel.cli.overview import install_hint
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.foreign_homes import ForeignHomeError
    from hermes_kernel.plugins.discovery import declared_conflicts
    from hermes_kernel.plugins.sections import check_plugin_sections

    app = app_of(ctx)
    findings = [_finding("ok", f"Python {sys.version.split()[0]} at {sys.executable}")]
    try:
        settings = app.settings
    except ForeignHomeError as exc:
        return [*findings, _finding("error", exc.problem, exc.fix)]
    except ConfigError as exc:
        findings += [
            _finding(
                "error",
                problem,
                "edit the file as the message says, then run: hermes config validate",
            )
            for problem in exc.problems
        ]
        return findings
    app.rescan = True  # a health check looks at what is installed now, not at a cache
    findings += _home_findings(settings.home)
    findings += _store_findings(app.host, settings)
    findings += [_finding("warning", finding, fix) for finding, fix in settings.unknown_keys]
    findings += [
        _finding("error", line, "rename the key to what it meant, or remove it")
        for line in settings.misspelled_safety
    ]
    host = app.host
    host.report_failures = False  # each failure becomes a finding instead
    enabled = host.enabled()
    findings.append(
        _finding("ok", f"{len(host.records)} plugins installed, {len(enabled)} enabled")
    )
    for name, problems in declared_conflicts(enabled).items():
        findings += [
            _finding("error", f"plugin {name!r} {p}", f"disable one: hermes plugins disable {name}")
            for p in problems
        ]
    for outcome in host.load_all():
        record = host.record(outcome.name)
        label = record.label if record else outcome.name
        if not outcome.ok:
            findings.append(
                _finding(
                    "error",
                    f"{label} failed to load: {outcome.error}",
                    f"reinstall or upgrade it, or: hermes plugins disable {outcome.name}",
                )
            )
        for warning in outcome.warnings:
            findings.append(
                _finding("warning", f"{label} {warning}", "report it to the plugin's author")
            )
    report = check_plugin_sections(settings, host)
    findings += [
        _finding("error", p, "edit config.yaml as the message says") for p in report.problems
    ]
    findings += [
        _finding("warning", w, "fix the key's spelling, or enable the plugin that owns it")
        for w in report.warnings
    ]
    if not host.index.of_kind(Kind.PROVIDER):
        findings.append(
            _finding(
                "warning",
                "no plugin provides a model provider, so Hermes cannot use a model",
                install_hint(Kind.PROVIDER, "a model provider"),
            )
        )
    findings += _mechanism_findings(host)
    findings += _plugin_findings(host, settings, online)
    return findings


def _mechanism_findings(host: PluginHost) -> list[Finding]:
    """What the kernel cannot work without and leaves to plugins: the rules that judge
    commands (without them no tool runs a command) and a model router (without it no model
    is used). One that failed to load is an error; one turned off or not installed (a home
    with only the plugins it chose) a warning; each with the step that fixes it."""
    from hermes_kernel.plugins.missing import absence
    from hermes_kernel.providers.routing import STANDARD_ROUTER
    from hermes_kernel.tooling.environment import STANDARD_RULES

    findings = []
    for kind, what, standard, without in (
        (Kind.COMMAND_RULES, "command rules", STANDARD_RULES, "no tool may run a command"),
        (Kind.MODEL_ROUTER, "a model router", STANDARD_ROUTER, "no model can be used"),
    ):
        if host.index.of_kind(kind):
            continue
        why, fix, failed = absence(host, kind, what, standard)
        level: Level = "error" if failed else "warning"
        findings.append(_finding(level, f"{why}, so {without}", fix))
    return findings


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print findings as JSON.")
@click.option(
    "--online",
    is_flag=True,
    help="Also reach out: send the model one short request (and whatever else plugins test).",
)
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, online: bool) -> None:
    """Check this installation. Exit 0 when healthy, 1 when any check found an error."""
    findings = collect_findings(ctx, online)
    errors = [f for f in findings if f.level == "error"]
    if as_json:
        import json

        click.echo(
            json.dumps(
                {"healthy": not errors, "findings": [f.as_dict() for f in findings]}, indent=2
            )
        )
    else:
        marks = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}
        for finding in findings:
            click.echo(f"[{marks[finding.level]}] {finding.message}")
            if finding.fix and finding.level != "ok":
                click.echo(f"       fix: {finding.fix}")
        warnings = sum(f.level == "warning" for f in findings)
        click.echo(
            f"{len(errors)} errors, {warnings} warnings: " + ("unhealthy" if errors else "healthy")
        )
    if errors:
        ctx.exit(1)
