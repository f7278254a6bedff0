"""Find installed plugins from package metadata alone: nothing is imported here.

Each distribution's entry points are read once. ``hermes.plugins`` names the plugins;
``hermes.provides`` entries (``KIND.NAME = <same target>``) form the static manifest that lets
the kernel import only the plugins a command needs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from importlib import metadata

from hermes_kernel.plugins import MANIFEST_GROUP, PLUGIN_GROUP
from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import Kind, parse_manifest_key


@dataclass(frozen=True)
class _Entry:
    name: str
    value: str
    distribution: str
    version: str


def _entries(group: str) -> list[_Entry]:
    found = []
    for entry in metadata.entry_points(group=group):
        dist = entry.dist
        dist_name = dist.name if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        found.append(_Entry(entry.name, entry.value, dist_name, version))
    return found


def _attach_manifest(records: list[PluginRecord], manifest: list[_Entry]) -> list[PluginRecord]:
    by_dist: dict[str, list[PluginRecord]] = defaultdict(list)
    for record in records:
        by_dist[record.distribution].append(record)
    declares: dict[str, set[tuple[Kind, str]]] = defaultdict(set)
    problems: dict[str, list[str]] = defaultdict(list)
    for entry in manifest:
        owners = by_dist.get(entry.distribution, [])
        matching = [r for r in owners if r.target == entry.value] or (
            owners if len(owners) == 1 else []
        )
        if not matching:
            continue  # a manifest without a plugin in the same distribution declares nothing
        owner = matching[0]
        try:
            declares[owner.name].add(parse_manifest_key(entry.name))
        except ValueError as exc:
            problems[owner.name].append(f"bad {MANIFEST_GROUP} entry: {exc}")
    return [
        replace(
            record,
            declares=frozenset(declares.get(record.name, ())),
            has_manifest=record.name in declares,
            problems=record.problems + tuple(problems.get(record.name, ())),
        )
        for record in records
    ]


def discover() -> list[PluginRecord]:
    """Every installed plugin, sorted by name; duplicate names are marked, not dropped."""
    records: list[PluginRecord] = []
    owner_of: dict[str, str] = {}
    for entry in sorted(_entries(PLUGIN_GROUP), key=lambda e: (e.name, e.distribution)):
        problems: tuple[str, ...] = ()
        if entry.name in owner_of:
            problems = (
                f"plugin name {entry.name!r} is already used by distribution "
                f"{owner_of[entry.name]}; uninstall one of the two",
            )
        else:
            owner_of[entry.name] = entry.distribution
        records.append(
            PluginRecord(
                entry.name, entry.value, entry.distribution, entry.version, problems=problems
            )
        )
    return _attach_manifest(records, _entries(MANIFEST_GROUP))


def declared_conflicts(records: list[PluginRecord]) -> dict[str, list[str]]:
    """For each plugin, the names it declares that an earlier (by name) plugin also declares."""
    first: dict[tuple[Kind, str], str] = {}
    conflicts: dict[str, list[str]] = defaultdict(list)
    for record in records:
        for key in sorted(record.declares):
            if key in first:
                conflicts[record.name].append(
                    f"declares {key[0].value} {key[1]!r}, also declared by plugin {first[key]!r}"
                )
            else:
                first[key] = record.name
    return dict(conflicts)
