"""``hermes store``: where the home's state is kept, and ``migrate`` to move it between the
store engines installed: into a shared database (a URL), or back into the home."""

from __future__ import annotations

import click

from hermes_kernel.cli.main import HermesGroup, app_of


@click.group(cls=HermesGroup)
def store() -> None:
    """Where sessions, messages and plugins' tables are kept; move them between stores."""


@store.command("where")
@click.pass_context
def where(ctx: click.Context) -> None:
    """Say which store this home uses."""
    from hermes_kernel.plugins.store_engines import store_where

    app = app_of(ctx)
    click.echo(store_where(app.host, app.settings.home, app.settings.document.data))


@store.command("migrate")
@click.option(
    "--to",
    "target_text",
    required=True,
    metavar="SCHEME://... | ENGINE",
    help="The store to copy into: a database URL (an empty database), or the name of a store "
    "engine that keeps the store in HERMES_HOME (the standard one: sqlite).",
)
@click.option(
    "--no-switch",
    is_flag=True,
    help="Copy only; leave store.url in config.yaml as it is.",
)
@click.pass_context
def migrate(ctx: click.Context, target_text: str, no_switch: bool) -> None:
    """Copy this home's state into another store, then point config.yaml at it.

    Stop every long-running front-end (every worker) first: what is written during the copy
    would be left behind. The source is never changed, so switching back is a config edit.
    """
    from hermes_kernel.config.edit import set_value, unset_value
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.config.store_location import (
        StoreLocation,
        store_location,
        store_password,
    )
    from hermes_kernel.plugins.store_engines import (
        engine_for,
        home_engines,
        open_database,
        open_with,
        target_of,
    )
    from hermes_kernel.store.errors import StoreError
    from hermes_kernel.store.transfer import check_empty, left_behind, transfer

    app = app_of(ctx)
    settings = app.settings
    home, host = settings.home, app.host
    current = store_location(home, settings.document.data)
    to_home = "://" not in target_text
    try:
        if to_home:
            name = target_text.strip().lower()
            engines = {engine.name: engine for engine in home_engines(host)}
            if name not in engines:
                known = ", ".join(engines) or "none is installed"
                raise click.UsageError(
                    f"--to takes a database URL (SCHEME://...) or the name of a store engine "
                    f"that keeps the store in HERMES_HOME ({known})"
                )
            engine = engines[name]
            target = target_of(home, StoreLocation())
        else:
            from hermes_kernel.config.model import StoreConfig

            try:
                StoreConfig.check_url(target_text)  # what config.yaml will accept
            except ValueError as exc:
                raise click.UsageError(f"--to: {exc}") from None
            engine = engine_for(host, target_text)
            target = target_of(home, StoreLocation(target_text, store_password(home)))
    except StoreError as exc:  # no engine for it: what to install
        raise click.ClickException(str(exc)) from None
    located = engine.locate(target) if engine.locate is not None else None
    if to_home and current.url is None:
        raise click.ClickException(f"this home already keeps its state in {located or name}")
    if not to_home and current.url == target_text:
        raise click.ClickException("this home already keeps its state there")
    if located is not None and located.exists():
        raise click.ClickException(
            f"{located} exists (the state from before the move?): move it aside first"
        )
    schemas = host.store_schemas()
    try:
        source = open_database(host, home, settings.document.data)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    copying = False  # once rows may have gone in, a failure leaves some there
    try:
        made = open_with(engine, target)
        try:
            check_empty(made, schemas)
            copying = True
            for name in left_behind(source, schemas):
                click.echo(f"left behind: the tables of {name!r} (no loaded plugin declares them)")
            total = 0
            for copied in transfer(
                source, made, schemas, lambda c: click.echo(f"{c.table}: {c.rows} rows")
            ):
                total += copied.rows
            where = made.where
        finally:
            made.close()
    except StoreError as exc:
        if located is not None:  # made here, from nothing: a half-made one would block a retry
            for leftover in located.parent.glob(f"{located.name}*"):
                leftover.unlink(missing_ok=True)
            raise click.ClickException(f"{exc} (nothing was kept; try again)") from None
        if not copying:
            raise click.ClickException(str(exc)) from None
        raise click.ClickException(
            f"{exc}; part of the copy is in that database now: drop it and create it again "
            "(it held nothing before) before trying again"
        ) from None
    finally:
        source.close()
    click.echo(f"copied {total} rows into {where}; {source.where} is unchanged")
    if no_switch:
        return
    config = settings.config_path
    try:
        if to_home:
            unset_value(config, "store.url")
        else:
            set_value(config, "store.url", target_text)
    except ConfigError as exc:
        raise click.ClickException(f"copied, but config.yaml was not changed: {exc}") from None
    click.echo(
        f"config.yaml now keeps the state in {where}; restart long-running front-ends to use it"
    )
