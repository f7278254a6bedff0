"""``hermes config``: show, locate and validate configuration."""

from __future__ import annotations

import json
from typing import Any

import click

from hermes_kernel.cli.main import HermesGroup, app_of


@click.group(cls=HermesGroup)
def config() -> None:
    """Show, locate, validate and change config.yaml."""


@config.command("path")
@click.pass_context
def path(ctx: click.Context) -> None:
    """Print the path of config.yaml (it may not exist yet)."""
    from hermes_kernel.config.home import resolve_home
    from hermes_kernel.config.settings import config_path

    app = app_of(ctx)
    import os

    click.echo(str(config_path(resolve_home(app.flags.home, app.flags.profile, os.environ))))


def _effective(ctx: click.Context) -> dict[str, Any]:
    """The effective configuration: validated values with defaults filled in (plugin sections
    included, which imports the plugins that own them), secrets redacted."""
    from hermes_commons.redact import redact_data
    from hermes_kernel.plugins.sections import check_plugin_sections

    app = app_of(ctx)
    settings = app.settings
    report = check_plugin_sections(settings, app.host, include_absent=True)
    for message in report.warnings + report.problems:
        click.echo(f"warning: {message} (shown as written)", err=True)
    from hermes_kernel.config.model import KernelConfig

    # The kernel's own sections with their defaults filled in (config.yaml validated once
    # already: a problem would have ended the command).
    kernel = KernelConfig.model_validate(settings.raw).model_dump(mode="json", exclude={"plugins"})
    effective: dict[str, Any] = {"plugins": settings.plugins.as_mapping()}
    for key, value in settings.raw.items():
        if key != "plugins":
            effective[key] = report.values.get(key, kernel.get(key, value))
    effective.update({k: v for k, v in kernel.items() if k not in effective})
    effective.update({k: v for k, v in report.values.items() if k not in effective})
    shown: dict[str, Any] = redact_data(effective, settings.secrets.values())
    return shown


@config.command("show")
@click.pass_context
def show(ctx: click.Context) -> None:
    """Print the effective configuration: validated values with defaults filled in (plugin
    sections included, which imports the plugins that own them), secrets redacted."""
    import yaml

    shown = _effective(ctx)
    path = app_of(ctx).settings.config_path
    source = path if path.exists() else f"{path} (not created yet)"
    click.echo(f"# {source}: effective values, secrets redacted")
    click.echo(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True).rstrip())


@config.command("get")
@click.argument("key")
@click.pass_context
def get_command(ctx: click.Context, key: str) -> None:
    """Print KEY's effective value (dotted: model.default, agent.retries): what is set, or
    its default. Text and numbers print as they are, sections and lists as YAML."""
    import difflib

    import yaml

    from hermes_kernel.runtime.config_change import KEY

    if not KEY.match(key):
        raise click.UsageError(f"{key!r} is not a dotted key like model.default or agent.retries")
    value: Any = _effective(ctx)
    walked: list[str] = []
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            where = ".".join(walked) or "config.yaml"
            known = sorted(value) if isinstance(value, dict) else []
            close = difflib.get_close_matches(part, known, n=1)
            hint = f"; did you mean {'.'.join([*walked, close[0]])}?" if close else ""
            listing = f" (it has: {', '.join(known)})" if known and not close else ""
            raise click.ClickException(f"{where} has no {part!r}{hint}{listing}")
        value = value[part]
        walked.append(part)
    if isinstance(value, dict | list):
        click.echo(yaml.safe_dump(value, sort_keys=False, allow_unicode=True).rstrip())
    elif value is None:
        click.echo("null")
    elif isinstance(value, bool):
        click.echo("true" if value else "false")
    else:
        click.echo(str(value))


@config.command("validate")
@click.pass_context
def validate(ctx: click.Context) -> None:
    """Check config.yaml (and the sections plugins own); exit 1 if it has errors."""
    from hermes_kernel.plugins.sections import check_plugin_sections

    app = app_of(ctx)
    settings = app.settings  # kernel sections and .env: a ConfigError ends here with exit 1
    report = check_plugin_sections(settings, app.host)
    warnings = [f"{finding}; {fix}" for finding, fix in settings.unknown_keys] + report.warnings
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    problems = settings.misspelled_safety + report.problems
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    if problems:
        ctx.exit(1)
    click.echo(f"{settings.config_path}: valid" + (" (with warnings)" if warnings else ""))


def _checked_key(key: str) -> str:
    from hermes_kernel.runtime.config_change import KEY, key_problem

    problem = key_problem(key)
    if problem is not None and not KEY.match(key):
        raise click.UsageError(problem)
    if problem is not None:
        raise click.ClickException(problem)
    return key


def _validator(ctx: click.Context, key: str | None = None) -> Any:
    from hermes_kernel.cli.config_check import config_validator

    return config_validator(app_of(ctx), key)


def _parsed_value(text: str) -> Any:
    """VALUE as YAML reads it: ``true``, ``5``, ``[a, b]``, ``{k: v}``; anything else is text."""
    from hermes_kernel.runtime.config_change import parsed_value

    return parsed_value(text)


@config.command("set")
@click.argument("key")
@click.argument("value")
@click.pass_context
def set_command(ctx: click.Context, key: str, value: str) -> None:
    """Set KEY (dotted: model.default, agent.retries) to VALUE, read as YAML (5, true,
    [a, b]); checked first, and the file keeps its comments and layout."""
    from hermes_kernel.config.edit import set_value

    app = app_of(ctx)
    parsed = _parsed_value(value)
    set_value(app.settings.config_path, _checked_key(key), parsed, _validator(ctx, key))
    click.echo(f"{key} = {json.dumps(parsed, ensure_ascii=False, default=str)}")


@config.command("unset")
@click.argument("key")
@click.pass_context
def unset_command(ctx: click.Context, key: str) -> None:
    """Remove KEY (dotted) from config.yaml, so its default applies again."""
    from hermes_kernel.config.edit import NotSet, unset_value

    app = app_of(ctx)
    try:
        unset_value(app.settings.config_path, _checked_key(key), _validator(ctx))
    except NotSet:
        raise click.ClickException(f"{key} is not set in {app.settings.config_path}") from None
    click.echo(f"{key} unset (its default applies)")
