"""``hermes config``: show, locate and validate configuration."""

from __future__ import annotations

from typing import Any

import click

from hermes_kernel.cli.main import app_of


@click.group()
def config() -> None:
    """Show, locate and validate config.yaml."""


@config.command("path")
@click.pass_context
def path(ctx: click.Context) -> None:
    """Print the path of config.yaml (it may not exist yet)."""
    from hermes_kernel.config.settings import config_path
    from hermes_kernel.home import resolve_home

    app = app_of(ctx)
    import os

    click.echo(str(config_path(resolve_home(app.flags.home, app.flags.profile, os.environ))))


@config.command("show")
@click.pass_context
def show(ctx: click.Context) -> None:
    """Print the effective configuration: validated values with defaults filled in (plugin
    sections included, which imports the plugins that own them), secrets redacted."""
    import yaml

    from hermes_kernel.config.sections import check_plugin_sections
    from hermes_kernel.redact import redact_data

    app = app_of(ctx)
    settings = app.settings
    report = check_plugin_sections(settings, app.host, include_absent=True)
    for message in report.warnings + report.problems:
        click.echo(f"warning: {message} (shown as written)", err=True)
    effective: dict[str, Any] = {"plugins": settings.plugins.as_mapping()}
    for key, value in settings.raw.items():
        if key != "plugins":
            effective[key] = report.values.get(key, value)
    effective.update({k: v for k, v in report.values.items() if k not in effective})
    shown = redact_data(effective, settings.secrets.values())
    path = settings.config_path
    source = path if path.exists() else f"{path} (not created yet)"
    click.echo(f"# {source}: effective values, secrets redacted")
    click.echo(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True).rstrip())


@config.command("validate")
@click.pass_context
def validate(ctx: click.Context) -> None:
    """Check config.yaml (and the sections plugins own); exit 1 if it has errors."""
    from hermes_kernel.config.sections import check_plugin_sections

    app = app_of(ctx)
    settings = app.settings  # kernel sections and .env: a ConfigError ends here with exit 1
    report = check_plugin_sections(settings, app.host)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in report.problems:
        click.echo(f"error: {problem}", err=True)
    if report.problems:
        ctx.exit(1)
    click.echo(f"{settings.config_path}: valid" + (" (with warnings)" if report.warnings else ""))
