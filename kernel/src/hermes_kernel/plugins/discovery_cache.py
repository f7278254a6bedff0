"""Remember the plugin discovery scan until the Python environment changes.

Scanning metadata means importing importlib.metadata and reading every installed
distribution; the result only changes when something is installed, removed or upgraded.
The cache is valid while (a) the interpreter and ``sys.path`` are the same, (b) every
``sys.path`` folder has the same mtime (installing or removing a distribution adds or
removes a folder there), and (c) every plugin's ``entry_points.txt`` and help file has the
same mtime (an in-place reinstall; a help file edited in an editable install). The
fingerprint is taken before the scan and checked again after it, so an install that races
with a scan is never cached as current.
``hermes plugins list --verify`` and ``hermes doctor`` always rescan (and refresh the cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_commons.files import write_cache_json
from hermes_kernel._version import __version__
from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import Kind

_FORMAT = 3


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return None


def fingerprint() -> list[Any]:
    """What the environment looks like now; compare before and after a scan."""
    return [_FORMAT, __version__, sys.executable, [[p, _mtime(p)] for p in sys.path]]


def _file(cache_dir: Path) -> Path:
    # One file per interpreter and path, so two virtualenvs sharing a home do not thrash.
    digest = hashlib.sha256(json.dumps([sys.executable, sys.path]).encode()).hexdigest()[:16]
    return cache_dir / f"plugins-{digest}.json"


def _to_json(record: PluginRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "target": record.target,
        "distribution": record.distribution,
        "version": record.version,
        "declares": sorted([kind.value, name] for kind, name in record.declares),
        "has_manifest": record.has_manifest,
        "problems": list(record.problems),
        "summary": record.summary,
        "help": [list(line) for line in record.help],
    }


def _from_json(data: dict[str, Any]) -> PluginRecord:
    return PluginRecord(
        name=data["name"],
        target=data["target"],
        distribution=data["distribution"],
        version=data["version"],
        declares=frozenset((Kind(kind), name) for kind, name in data["declares"]),
        has_manifest=data["has_manifest"],
        problems=tuple(data["problems"]),
        summary=data["summary"],
        help=tuple((key, text) for key, text in data["help"]),
    )


def load(cache_dir: Path) -> list[PluginRecord] | None:
    """The cached records, or None when there is no valid cache."""
    try:
        entry = json.loads(_file(cache_dir).read_text(encoding="utf-8"))
        if entry["environment"] != fingerprint():
            return None
        if any(_mtime(path) != mtime for path, mtime in entry["watched"]):
            return None
        return [_from_json(item) for item in entry["records"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def watch_list(metadata_dirs: list[str], help_files: Sequence[str] = ()) -> list[list[Any]]:
    """Each plugin distribution's entry_points.txt, and each help file (present or not: one
    added later counts as a change), with its mtime now. (A reinstall that replaces the
    whole folder also changes its sys.path folder, which is watched anyway.)"""
    paths = [os.path.join(folder, "entry_points.txt") for folder in metadata_dirs]
    return [[path, _mtime(path)] for path in [*paths, *help_files]]


def store(
    cache_dir: Path, environment: list[Any], records: list[PluginRecord], watched: list[list[Any]]
) -> None:
    """Cache ``records`` scanned in ``environment`` (a fingerprint taken before the scan)."""
    if fingerprint() != environment:
        return  # something was installed while we scanned: the next run scans again
    entry = {
        "environment": environment,
        "watched": watched,
        "records": [_to_json(record) for record in records],
    }
    write_cache_json(_file(cache_dir), entry)
