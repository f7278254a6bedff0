"""``hermes plugins install | uninstall | upgrade``: change which plugins are installed.

Each change shows what it will do, asks, then runs as one transaction (see
:mod:`hermes_plugin_plugin_manager.transaction`): verified, or rolled back.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_plugin_plugin_manager import context

if TYPE_CHECKING:
    from hermes_plugin_plugin_manager.catalog import Catalog
    from hermes_plugin_plugin_manager.environment import Environment
    from hermes_plugin_plugin_manager.targets import Target
    from hermes_plugin_plugin_manager.transaction import Verified

_catalog_option = click.option(
    "--catalog",
    "catalog_dir",
    metavar="DIR",
    help="The plugin catalog folder (default: HERMES_CATALOG, then this checkout's).",
)
_yes_option = click.option("--yes", "-y", is_flag=True, help="Do not ask before changing anything.")
_find_links_option = click.option(
    "--find-links",
    "find_links",
    multiple=True,
    metavar="DIR|URL",
    help="Also look for packages here (passed to the installer).",
)


def _catalog_loader(catalog_dir: str | None) -> Callable[[], Catalog]:
    from hermes_plugin_plugin_manager.catalog import catalog_folder, load_catalog

    loaded: list[Catalog] = []

    def load() -> Catalog:
        if not loaded:
            loaded.append(load_catalog(catalog_folder(catalog_dir)))
        return loaded[0]

    return load


def _environment() -> Environment:
    from hermes_plugin_plugin_manager.environment import Environment

    return Environment.current()


def _installed_versions() -> dict[str, str]:
    from importlib import metadata

    return {name: metadata.version(name) for name in ("hermes-kernel", "hermes-sdk")}


def check_compatible(target: Target) -> None:
    from packaging.specifiers import SpecifierSet

    from hermes_plugin_plugin_manager.environment import InstallerError

    entry = target.entry
    if entry is None:
        return
    have = _installed_versions()
    for package, wanted in (
        ("hermes-kernel", entry.requires_hermes),
        ("hermes-sdk", entry.requires_sdk),
    ):
        if have[package] not in SpecifierSet(wanted):
            raise InstallerError(
                f"{entry.name} needs {package}{wanted}, this is {have[package]}; upgrade Hermes "
                "first (or pick a catalog entry made for this version)"
            )


def _preview(env: Environment, targets: list[Target], extra: list[str]) -> None:
    for target in targets:
        title = target.distribution or target.label
        version = f" {target.version}" if target.version else ""
        click.echo(f"{title}{version}  (from {target.label})")
        if target.entry is not None:
            entry = target.entry
            click.echo(f"  catalog:   {entry.tier}, maintained by {entry.maintainer}")
            if entry.environment:
                click.echo(f"  needs:     {', '.join(entry.environment)} in the environment")
        plugins = target.plugins
        if plugins is not None:
            click.echo(f"  plugins:   {', '.join(plugins) or 'none (this is not a Hermes plugin)'}")
        provides = target.provides
        click.echo(
            "  provides:  "
            + (", ".join(provides) if provides else "unknown until installed (no manifest)")
        )
        for note in target.notes:
            click.echo(f"  note:      {note}")
    args = [a for t in targets for a in t.args]
    plan = env.plan([*args, *extra])
    click.echo("packages:   " + (", ".join(plan) if plan else "nothing new to install"))
    click.echo(f"into:       {env.describe()}")


def _confirm(yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise click.ClickException("not a terminal, so cannot ask: add --yes to go ahead")
    if not click.confirm("Proceed?", default=False):
        raise click.ClickException("nothing was changed")


def _settle(enable: bool) -> Callable[[Verified, set[str]], None]:
    """After verification: new plugins stay disabled unless --enable; report each one."""

    def settle(verified: Verified, added: set[str]) -> None:
        for name, row in sorted(verified.plugins.items()):
            fresh = row.get("distribution") in added
            if fresh or enable:
                context.set_plugin_enabled(name, enable)
            state = "enabled" if enable else ("disabled" if fresh else "kept as it was")
            click.echo(f"{name}: installed and verified ({row.get('load_ms')} ms to load); {state}")
            if not enable and fresh:
                click.echo(f"  enable it with: hermes plugins enable {name}")

    return settle


def _run_change(
    args: list[str],
    enable: bool,
    what: str,
    require_plugins: bool = True,
    sources: list[str] | None = None,
) -> None:
    from hermes_plugin_plugin_manager.environment import InstallerError
    from hermes_plugin_plugin_manager.transaction import transaction

    env = _environment()
    try:
        transaction(
            env,
            context.home(),
            context.config_path(),
            lambda: env.install(args, what),
            _settle(enable),
            require_plugins=require_plugins,
            sources=sources or [],
        )
    except InstallerError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("install")
@click.argument("specs", nargs=-1, metavar="NAME|PATH|git+URL@REF|WHEEL...")
@click.option("--bundle", metavar="NAME", help="Install a distro bundle from the catalog.")
@click.option("--enable", is_flag=True, help="Enable what is installed (default: disabled).")
@_yes_option
@_catalog_option
@_find_links_option
def install(
    specs: tuple[str, ...],
    bundle: str | None,
    enable: bool,
    yes: bool,
    catalog_dir: str | None,
    find_links: tuple[str, ...],
) -> None:
    """Install plugins: show what they bring, install, verify, or roll back."""
    from hermes_plugin_plugin_manager.catalog import CatalogError
    from hermes_plugin_plugin_manager.environment import InstallerError
    from hermes_plugin_plugin_manager.targets import resolve_target

    if not specs and not bundle:
        raise click.UsageError("name a plugin (NAME, PATH, git+URL@REF or WHEEL) or a --bundle")
    catalog = _catalog_loader(catalog_dir)
    extra = [arg for link in find_links for arg in ("--find-links", link)]
    env = _environment()
    try:
        with tempfile.TemporaryDirectory(prefix="hermes-install-") as work:
            if bundle:
                args = _bundle_preview(env, catalog(), bundle, extra)
            else:
                targets = []
                for number, spec in enumerate(specs):
                    folder = Path(work) / str(number)
                    folder.mkdir()
                    target = resolve_target(spec, env, folder, catalog)
                    check_compatible(target)
                    targets.append(target)
                _preview(env, targets, extra)
                args = [a for t in targets for a in t.args]
            _confirm(yes)
            _run_change([*args, *extra], enable, "installing", sources=extra)
    except (InstallerError, CatalogError) as exc:
        raise click.ClickException(str(exc)) from None
    _warn_if_resynced(env)


def _warn_if_resynced(env: Environment) -> None:
    project = env.synced_project()
    if project is None:
        return
    launcher = project / "scripts" / "hermes"
    keeps = f"; {launcher} keeps them" if launcher.exists() else ""
    click.echo(
        f"warning: {env.prefix} is the environment of the uv project {project}: a plain "
        "`uv sync` there removes what was just installed (it keeps only the lock's packages); "
        f"sync with `uv sync --inexact`{keeps}",
        err=True,
    )


def _bundle_preview(env: Environment, catalog: Catalog, name: str, extra: list[str]) -> list[str]:
    lock = catalog.bundle_lock(name)
    click.echo(f"bundle {name}: {catalog.bundles[name].description}")
    for plugin in catalog.bundle_plugins(name):
        entry = catalog.entries[plugin]
        click.echo(f"  {plugin} {entry.version}: {', '.join(entry.provides) or 'nothing'}")
    # Every package is pinned with its hashes: the same versions every time, or nothing. The
    # lock is the whole resolution (overrides applied), so nothing beyond it is looked up.
    args = ["--require-hashes", "--no-deps", "-r", str(lock)]
    plan = env.plan([*args, *extra])
    click.echo("packages:   " + (", ".join(plan) if plan else "nothing new to install"))
    click.echo(f"into:       {env.describe()}")
    return args


@click.command("uninstall")
@click.argument("names", nargs=-1, required=True)
@_yes_option
def uninstall(names: tuple[str, ...], yes: bool) -> None:
    """Remove the distributions that provide plugins NAMES (their dependencies stay)."""
    from hermes_plugin_plugin_manager.environment import InstallerError

    installed = context.installed_plugins()
    distributions = []
    for name in names:
        record = next((plugin for plugin in installed if plugin.name == name), None)
        if record is None:
            raise click.ClickException(
                f"no installed plugin named {name!r}; see: hermes plugins list"
            )
        distributions.append(record.distribution)
        others = [r.name for r in installed if r.distribution == record.distribution]
        also = [o for o in others if o != name]
        click.echo(f"{name}: remove {record.distribution} {record.version}")
        if also:
            click.echo(f"  it also provides plugins {', '.join(also)}, which go with it")
    _confirm(yes)
    env = _environment()
    try:
        env.uninstall(sorted(set(distributions)), "uninstalling")
    except InstallerError as exc:
        raise click.ClickException(str(exc)) from None
    for dist in sorted(set(distributions)):
        click.echo(f"{dist}: uninstalled")
    if env.uv_tool:
        from hermes_plugin_plugin_manager import uv_receipt

        try:
            unlisted = uv_receipt.record(env.prefix, changed=[], added=set(), removed=distributions)
        except InstallerError as exc:
            raise click.ClickException(str(exc)) from None
        for dist in unlisted:
            click.echo(
                f"  note: {dist} came with the tool's own package, so `uv tool upgrade` "
                "puts it back; disable it instead to keep it off"
            )


@click.command("upgrade")
@click.argument("names", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Upgrade every installed plugin.")
@_yes_option
@_catalog_option
@_find_links_option
def upgrade(
    names: tuple[str, ...],
    everything: bool,
    yes: bool,
    catalog_dir: str | None,
    find_links: tuple[str, ...],
) -> None:
    """Upgrade plugins: to the catalog's pin, their git ref's head, or the newest release."""
    from hermes_plugin_plugin_manager.catalog import CatalogError
    from hermes_plugin_plugin_manager.environment import InstallerError
    from hermes_plugin_plugin_manager.upgrades import upgrade_targets

    if not names and not everything:
        raise click.UsageError("name the plugins to upgrade, or pass --all")
    records = context.installed_plugins()
    chosen = [r for r in records if everything or r.name in names]
    unknown = sorted(set(names) - {r.name for r in records})
    if unknown:
        raise click.ClickException(f"not installed: {', '.join(unknown)}; see: hermes plugins list")
    extra = [arg for link in find_links for arg in ("--find-links", link)]
    env = _environment()
    try:
        with tempfile.TemporaryDirectory(prefix="hermes-upgrade-") as work:
            targets = upgrade_targets(chosen, env, Path(work), _catalog_loader(catalog_dir))
            if not targets:
                click.echo("everything is up to date")
                return
            for target in targets:
                check_compatible(target)
            _preview(env, targets, extra)
            _confirm(yes)
            args = [a for t in targets for a in t.args]
            _run_change([*args, *extra], False, "upgrading", sources=extra)
    except (InstallerError, CatalogError) as exc:
        raise click.ClickException(str(exc)) from None
