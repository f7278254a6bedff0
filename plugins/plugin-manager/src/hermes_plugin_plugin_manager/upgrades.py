"""What "upgrade" means for each installed plugin, by where it came from.

A catalogued plugin moves to the catalog's pin; one installed from git follows the ref it was
installed with (a branch moves to its newest commit); one installed from a folder or a file is
reinstalled from it; anything else moves to the newest release on the index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from hermes_plugin_plugin_manager.catalog import Catalog, CatalogError, GitSource
from hermes_plugin_plugin_manager.environment import Environment, Installed, normalize
from hermes_plugin_plugin_manager.targets import Target, from_entry, from_git
from hermes_sdk.runtime import PluginState


def catalog_or_none(catalog: Callable[[], Catalog]) -> Catalog | None:
    try:
        return catalog()
    except CatalogError:
        return None


def is_outdated(installed: Installed, catalog: Catalog | None, name: str) -> str | None:
    """The catalog's version when it differs from what is installed, else None."""
    entry = catalog.find(name) if catalog is not None else None
    if entry is None:
        return None
    if isinstance(entry.source, GitSource):
        vcs = (installed.direct_url or {}).get("vcs_info")
        commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
        return None if commit == entry.source.commit else entry.version
    from packaging.version import Version

    if Version(installed.version) < Version(entry.source.version):
        return entry.version
    return None


def upgrade_targets(
    records: Sequence[PluginState], env: Environment, work: Path, catalog: Callable[[], Catalog]
) -> list[Target]:
    listing = catalog_or_none(catalog)
    installed = env.snapshot()
    targets: list[Target] = []
    seen: set[str] = set()
    for record in records:
        key = normalize(record.distribution)
        if key in seen or key not in installed:
            continue
        seen.add(key)
        dist = installed[key]
        folder = work / key
        folder.mkdir()
        entry = listing.find(record.name) if listing is not None else None
        url = dist.direct_url or {}
        vcs = url.get("vcs_info")
        if entry is not None:
            if is_outdated(dist, listing, record.name) is not None:
                targets.append(from_entry(entry, env, folder))
        elif isinstance(vcs, dict):
            ref = vcs.get("requested_revision") or ""
            target = from_git(f"git+{url['url']}" + (f"@{ref}" if ref else ""), env, folder)
            if not any(f"git commit {vcs.get('commit_id')}" in note for note in target.notes):
                targets.append(target)
        elif url:
            location = str(url.get("url", ""))
            reinstall = ["--reinstall-package", dist.name] if env.tool == "uv" else [
                "--force-reinstall", "--no-deps"
            ]  # fmt: skip
            targets.append(Target(location, [*reinstall, f"{dist.name} @ {location}"]))
        else:
            upgrade = ["--upgrade-package", dist.name] if env.tool == "uv" else ["--upgrade"]
            targets.append(Target(dist.name, [*upgrade, dist.name]))
    return targets
