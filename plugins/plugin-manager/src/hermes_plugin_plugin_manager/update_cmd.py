"""``hermes update``: what would change, then the installed plugins (and Hermes itself, when
a bundle pins a newer release) moved to the catalog's newest compatible releases, as one
transaction: verified, or rolled back, so the old plugins answer as before.

Only catalogued releases move here; a plugin installed from git, a folder or a file keeps
its own way (``hermes plugins upgrade NAME``). A release whose ``requires_hermes`` or
``requires_sdk`` this Hermes does not meet is shown and left out.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from hermes_plugin_plugin_manager import context
from hermes_plugin_plugin_manager.install_cmd import (
    _catalog_loader,
    _catalog_option,
    _confirm,
    _environment,
    _find_links_option,
    _run_change,
    _yes_option,
    check_compatible,
)

_CORE = ("hermes-kernel", "hermes-sdk", "hermes-commons")


@dataclass(frozen=True)
class _Move:
    distribution: str
    installed: str
    offered: str
    args: tuple[str, ...]
    blocked: str | None = None
    """Why it is left out (this Hermes is too old for it), or None."""


def _core_pins(bundle_text: str) -> dict[str, str]:
    """``hermes-kernel==V`` lines of a bundle lock: the release of Hermes it pins."""
    pins = {}
    for line in bundle_text.splitlines():
        requirement = line.strip().rstrip("\\").strip()
        name, _, version = requirement.partition("==")
        if name in _CORE and version:
            pins[name] = version.split()[0]
    return pins


@click.command("update")
@click.option("--check", "check_only", is_flag=True, help="Only say what would change.")
@_yes_option
@_catalog_option
@_find_links_option
def update(
    check_only: bool,
    yes: bool,
    catalog_dir: str | None,
    find_links: tuple[str, ...],
) -> None:
    """Move the installed plugins, and Hermes when a bundle pins a newer release, to the
    catalog's newest compatible releases: shown first, then installed and verified as one
    change; a release that fails verification is rolled back."""
    from packaging.version import Version

    from hermes_plugin_plugin_manager.catalog import CatalogError
    from hermes_plugin_plugin_manager.environment import InstallerError, normalize
    from hermes_plugin_plugin_manager.targets import from_entry

    load = _catalog_loader(catalog_dir)
    env = _environment()
    extra = [arg for link in find_links for arg in ("--find-links", link)]
    try:
        catalog = load()
        installed = env.snapshot()
        moves: list[_Move] = []
        with tempfile.TemporaryDirectory(prefix="hermes-update-") as work:
            for record in sorted(context.installed_plugins(), key=lambda r: r.name):
                entry = catalog.find(record.name)
                dist = installed.get(normalize(record.distribution))
                if entry is None or dist is None or dist.direct_url:
                    continue  # not catalogued, or installed from git, a folder or a file
                if Version(entry.version) <= Version(dist.version):
                    continue
                folder = Path(work) / normalize(record.distribution)
                folder.mkdir(exist_ok=True)
                target = from_entry(entry, env, folder)
                blocked = None
                try:
                    check_compatible(target)
                except InstallerError as exc:
                    blocked = str(exc)
                moves.append(
                    _Move(dist.name, dist.version, entry.version, tuple(target.args), blocked)
                )
            for bundle in sorted(catalog.bundles):
                try:
                    pins = _core_pins(catalog.bundle_lock(bundle).read_text())
                except CatalogError:
                    continue
                for name, version in pins.items():
                    have = installed.get(name)
                    if have is None or have.direct_url or Version(version) <= Version(have.version):
                        continue
                    if not any(move.distribution == name for move in moves):
                        moves.append(_Move(name, have.version, version, (f"{name}=={version}",)))
            if not moves:
                click.echo("everything is up to date")
                return
            for move in moves:
                note = f"  (left out: {move.blocked})" if move.blocked else ""
                click.echo(f"{move.distribution}: {move.installed} -> {move.offered}{note}")
            ready = [move for move in moves if move.blocked is None]
            if check_only:
                click.echo(f"{len(ready)} update(s) ready: run `hermes update` to install them")
                return
            if not ready:
                raise click.ClickException("nothing can be updated with this Hermes")
            click.echo(f"into: {env.describe()}")
            _confirm(yes)
            args = [arg for move in ready for arg in move.args]
            _run_change([*args, *extra], False, "updating", sources=extra)
    except (InstallerError, CatalogError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(
        "updated: "
        + ", ".join(f"{m.distribution} {m.offered}" for m in ready)
        + " (verified: every plugin loads)"
    )
