"""``hermes store``: where the home's state is kept, and ``migrate`` to move it between
state.db and a shared PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_kernel.cli.main import HermesGroup, app_of

SQLITE = "sqlite"


@click.group(cls=HermesGroup)
def store() -> None:
    """Where sessions, messages and plugins' tables are kept; move them between stores."""


@store.command("where")
@click.pass_context
def where(ctx: click.Context) -> None:
    """Say which store this home uses."""
    from hermes_kernel.config.store_location import store_location
    from hermes_kernel.store.backend import redacted
    from hermes_kernel.store.state import state_db_path

    app = app_of(ctx)
    location = store_location(app.settings.home, app.settings.document.data)
    click.echo(redacted(location.url) if location.url else str(state_db_path(app.settings.home)))


@store.command("migrate")
@click.option(
    "--to",
    "target_text",
    required=True,
    metavar="postgresql://... | sqlite",
    help="The store to copy into: a PostgreSQL URL (an empty database), or sqlite for "
    "HERMES_HOME/state.db.",
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
        open_database,
        store_location,
        store_password,
    )
    from hermes_kernel.store.backend import StoreBackend
    from hermes_kernel.store.db import Database
    from hermes_kernel.store.errors import StoreError
    from hermes_kernel.store.state import state_db_path
    from hermes_kernel.store.transfer import check_empty, left_behind, transfer

    app = app_of(ctx)
    settings = app.settings
    home = settings.home
    current = store_location(home, settings.document.data)
    to_sqlite = target_text.strip().lower() == SQLITE
    if not to_sqlite and not target_text.startswith(("postgresql://", "postgres://")):
        raise click.UsageError("--to takes a postgresql:// URL, or sqlite for state.db")
    if not to_sqlite:
        from hermes_kernel.config.model import StoreConfig

        try:
            StoreConfig.check_url(target_text)  # what config.yaml will accept, no password
        except ValueError as exc:
            raise click.UsageError(f"--to: {exc}") from None
    if to_sqlite and current.url is None:
        raise click.ClickException(f"this home already keeps its state in {state_db_path(home)}")
    if not to_sqlite and current.url == target_text:
        raise click.ClickException("this home already keeps its state there")
    schemas = app.host.store_schemas()
    target: StoreBackend
    try:
        source = open_database(home, settings.document.data)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    copying = False  # once rows may have gone in, a failure leaves some there
    try:
        if to_sqlite:
            path = state_db_path(home)
            if path.exists():
                raise click.ClickException(
                    f"{path} exists (the state from before the move?): move it aside first"
                )
            target = Database(path)
        else:
            from hermes_kernel.store.postgres import PostgresDatabase

            target = PostgresDatabase(target_text, password=store_password(home))
        try:
            check_empty(target, schemas)
            copying = True
            for name in left_behind(source, schemas):
                click.echo(f"left behind: the tables of {name!r} (no loaded plugin declares them)")
            total = 0
            for copied in transfer(
                source, target, schemas, lambda c: click.echo(f"{c.table}: {c.rows} rows")
            ):
                total += copied.rows
            where = target.where
        finally:
            target.close()
    except StoreError as exc:
        if to_sqlite:  # made here, from nothing: a half-made state.db would block a retry
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
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
        if to_sqlite:
            unset_value(config, "store.url")
        else:
            set_value(config, "store.url", target_text)
    except ConfigError as exc:
        raise click.ClickException(f"copied, but config.yaml was not changed: {exc}") from None
    click.echo(
        f"config.yaml now keeps the state in {where}; restart long-running front-ends to use it"
    )
