"""``hermes profile``: named homes, each with its own config, .env, sessions and what its
plugins keep, inside HERMES_HOME/profiles/; ``use`` makes one the sticky default."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import click

from hermes_kernel.cli.main import HermesGroup, app_of


def _base(ctx: click.Context) -> Path:
    from hermes_kernel.config.home import base_home

    return base_home(app_of(ctx).flags.home, os.environ)


def _checked(name: str) -> str:
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.config.home import check_profile_name

    try:
        return check_profile_name(name, "profile")
    except ConfigError as exc:
        raise click.UsageError(exc.problems[0]) from None


def _home_of(base: Path, name: str) -> Path:
    from hermes_kernel.config.profiles import home_of

    return home_of(base, name)


def _active(ctx: click.Context, base: Path) -> tuple[str, str]:
    from hermes_kernel.config.home import chosen_profile

    return chosen_profile(base, app_of(ctx).flags.profile, os.environ)


@click.group(cls=HermesGroup)
def profile() -> None:
    """Named profiles: separate config, .env, sessions and plugin files."""


@profile.command("list")
@click.pass_context
def list_profiles(ctx: click.Context) -> None:
    """The default home and every profile; * marks the one in use."""
    from hermes_kernel.config.profiles import profile_names

    base = _base(ctx)
    active, _ = _active(ctx, base)
    for name in profile_names(base):
        mark = "*" if name == active else " "
        click.echo(f"{mark} {name:20} {_home_of(base, name)}")


@profile.command("create")
@click.argument("name")
@click.option(
    "--clone", is_flag=True, help="Start with a copy of the current config.yaml, .env and SOUL.md."
)
@click.pass_context
def create(ctx: click.Context, name: str, clone: bool) -> None:
    """Create profile NAME (empty, or --clone of the profile in use)."""
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.config.home import resolve_home
    from hermes_kernel.config.profiles import create_profile

    source = resolve_home(app_of(ctx).flags.home, app_of(ctx).flags.profile, os.environ)
    try:
        click.echo(create_profile(_base(ctx), _checked(name), source, clone=clone))
    except ConfigError as exc:
        raise click.ClickException(exc.problems[0]) from None
    click.echo(f"use it with: hermes profile use {name}   (or once: hermes --profile {name} ...)")


@profile.command("use")
@click.argument("name")
@click.pass_context
def use(ctx: click.Context, name: str) -> None:
    """Make NAME the profile every hermes command uses ('default' for the base home)."""
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.config.home import DEFAULT_PROFILE
    from hermes_kernel.config.profiles import use_profile

    try:
        click.echo(use_profile(_base(ctx), _checked(name)))
    except ConfigError as exc:
        raise click.ClickException(exc.problems[0]) from None
    if name != DEFAULT_PROFILE and os.environ.get("HERMES_PROFILE"):
        click.echo("note: HERMES_PROFILE is set in this shell and wins over this choice", err=True)


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


@profile.command("show")
@click.pass_context
def show(ctx: click.Context) -> None:
    """The profile in use, why, and what its home holds."""
    base = _base(ctx)
    name, why = _active(ctx, base)
    home = _home_of(base, name)
    click.echo(f"profile:  {name}  ({why})")
    click.echo(f"home:     {home}" + ("" if home.is_dir() else "  (does not exist)"))
    # The kernel's own files, then whatever else the home holds (what plugins keep there).
    own = ("config.yaml", ".env", "SOUL.md", "state.db")
    others = sorted(
        entry.name
        for entry in (home.iterdir() if home.is_dir() else ())
        if entry.name not in own
        and entry.name != "profiles"
        and not entry.name.startswith(".")
        and not entry.name.startswith("state.db-")  # the database's WAL and shared memory
    )
    for item in (*own, *others):
        path = home / item
        state = f"{_size(path):,} bytes" if path.exists() else "-"
        click.echo(f"  {item:12} {state}")


@profile.command("delete")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask first.")
@click.pass_context
def delete(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete profile NAME and everything in it (config, .env, sessions, plugin files)."""
    import sys

    from hermes_kernel.config.home import DEFAULT_PROFILE

    base = _base(ctx)
    if _checked(name) == DEFAULT_PROFILE:
        raise click.ClickException("the default profile is the base home; it cannot be deleted")
    home = _home_of(base, name)
    if not home.is_dir():
        raise click.ClickException(f"no profile {name!r}; see: hermes profile list")
    if _active(ctx, base)[0] == name:
        raise click.ClickException(
            f"{name!r} is the profile in use; switch first: hermes profile use default"
        )
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("not a terminal, so cannot ask: add --yes to delete it")
        click.confirm(f"Delete {home} and everything in it?", abort=True)
    shutil.rmtree(home)
    click.echo(f"deleted profile {name} ({home})")
