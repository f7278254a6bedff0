"""Find installed plugins from package metadata alone: nothing is imported here.

Each distribution's entry points are read once. ``hermes.plugins`` names the plugins;
``hermes.provides`` entries (``KIND.NAME = <same target>``) form the static manifest that lets
the kernel import only the plugins a command needs. A plugin that declares a command may ship
a help file beside its code (:mod:`hermes_commons.help_file`) saying what each command does; it is
found without importing the plugin and read once per scan, like the metadata.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from hermes_kernel.plugins import MANIFEST_GROUP, PLUGIN_GROUP
from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import Kind, manifest_key, parse_manifest_key


@dataclass(frozen=True)
class _Entry:
    group: str
    name: str
    value: str
    distribution: str
    version: str
    metadata_dir: str | None  # the .dist-info folder, when on disk
    summary: str = ""
    help_file: str | None = None  # where its help file is (or would be), for the cache
    help: tuple[tuple[str, str], ...] = ()  # (manifest key, one line) read from that file


def _scan() -> list[_Entry]:
    """Every entry point in our two groups (duplicate distributions on sys.path ignored)."""
    from importlib import metadata  # not needed when the discovery cache answers

    found = []
    for entry in [
        *metadata.entry_points(group=PLUGIN_GROUP),
        *metadata.entry_points(group=MANIFEST_GROUP),
    ]:
        dist = entry.dist
        # PathDistribution keeps its folder in a private attribute; without it the cache
        # simply cannot watch this distribution's metadata for in-place changes.
        folder = getattr(dist, "_path", None)
        meta = dist.metadata if dist is not None else None  # parsed once per entry
        found.append(
            _Entry(
                entry.group,
                entry.name,
                entry.value,
                dist.name if dist is not None else "?",
                (meta["Version"] if meta is not None else None) or "?",
                str(folder) if isinstance(folder, Path) else None,
                (meta.get("Summary") if meta is not None else None) or "",
            )
        )
    return _with_help(found)


def _with_help(entries: list[_Entry]) -> list[_Entry]:
    """Plugin entries of distributions that declare a command, with their help file read."""
    prefix = f"{Kind.COMMAND.value}."
    commanding = {
        e.distribution for e in entries if e.group == MANIFEST_GROUP and e.name.startswith(prefix)
    }
    return [
        _read_help(entry)
        if entry.group == PLUGIN_GROUP and entry.distribution in commanding
        else entry
        for entry in entries
    ]


def _read_help(entry: _Entry) -> _Entry:
    """``entry`` with its help file's lines. Help is cosmetic: a missing or unreadable file
    leaves the commands undescribed (the plugin's own tests catch a broken one)."""
    from hermes_commons.help_file import help_file_of, parse_help

    path = help_file_of(entry.value)
    if path is None:
        return entry
    try:
        lines = parse_help(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError):
        lines = {}
    described = tuple(sorted((manifest_key(*key), text) for key, text in lines.items()))
    return replace(entry, help_file=str(path), help=described)


def _attach_manifest(records: list[PluginRecord], manifest: list[_Entry]) -> list[PluginRecord]:
    by_dist: dict[str, list[PluginRecord]] = defaultdict(list)
    for record in records:
        by_dist[record.distribution].append(record)
    RecordKey = tuple[str, str]  # (plugin name, distribution): names alone may clash
    declares: dict[RecordKey, set[tuple[Kind, str]]] = defaultdict(set)
    problems: dict[RecordKey, list[str]] = defaultdict(list)
    for entry in manifest:
        owners = by_dist.get(entry.distribution, [])
        matching = [r for r in owners if r.target == entry.value] or (
            owners if len(owners) == 1 else []
        )
        if not matching:
            continue  # a manifest without a plugin in the same distribution declares nothing
        owner = (matching[0].name, matching[0].distribution)
        try:
            declares[owner].add(parse_manifest_key(entry.name))
        except ValueError as exc:
            problems[owner].append(f"bad {MANIFEST_GROUP} entry: {exc}")
    return [
        replace(
            record,
            declares=frozenset(declares.get((record.name, record.distribution), ())),
            has_manifest=(record.name, record.distribution) in declares,
            problems=record.problems + tuple(problems.get((record.name, record.distribution), ())),
        )
        for record in records
    ]


def records_from_entries(entries: list[_Entry]) -> list[PluginRecord]:
    """Every plugin, sorted by name; duplicate names are marked, not dropped."""
    records: list[PluginRecord] = []
    owner_of: dict[str, str] = {}
    plugins = [e for e in entries if e.group == PLUGIN_GROUP]
    for entry in sorted(plugins, key=lambda e: (e.name, e.distribution)):
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
                entry.name,
                entry.value,
                entry.distribution,
                entry.version,
                problems=problems,
                summary=entry.summary,
                help=entry.help,
            )
        )
    return _attach_manifest(records, [e for e in entries if e.group == MANIFEST_GROUP])


def discover(cache_dir: Path | None = None, rescan: bool = False) -> list[PluginRecord]:
    """Every installed plugin. With ``cache_dir``, a scan is reused until the environment
    changes (see :mod:`discovery_cache`), so start-up does not grow with what is installed;
    ``rescan`` ignores the cached scan and refreshes it."""
    from hermes_kernel.plugins import discovery_cache

    if cache_dir is not None and not rescan:
        cached = discovery_cache.load(cache_dir)
        if cached is not None:
            return cached
    environment = discovery_cache.fingerprint()
    entries = _scan()
    records = records_from_entries(entries)
    if cache_dir is not None:
        folders = sorted({e.metadata_dir for e in entries if e.metadata_dir is not None})
        help_files = sorted({e.help_file for e in entries if e.help_file is not None})
        watched = discovery_cache.watch_list(folders, help_files)
        discovery_cache.store(cache_dir, environment, records, watched)
    return records


def declared_conflicts(records: list[PluginRecord]) -> dict[str, list[str]]:
    """For each plugin, the names it declares that an earlier (by name) plugin also declares
    (hooks excepted: those are implemented by as many plugins as like)."""
    first: dict[tuple[Kind, str], str] = {}
    conflicts: dict[str, list[str]] = defaultdict(list)
    for record in records:
        for key in sorted(record.declares):
            if key[0] is Kind.HOOK:
                continue  # any number of plugins may implement a lifecycle hook
            if key in first:
                conflicts[record.name].append(
                    f"declares {key[0].value} {key[1]!r}, also declared by plugin {first[key]!r}"
                )
            else:
                first[key] = record.name
    return dict(conflicts)
