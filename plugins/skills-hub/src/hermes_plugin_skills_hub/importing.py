"""``hermes import hermes-agent``: the skills hermes-agent installed from its hub keep their
provenance. Each entry of its ``skills/.hub/lock.json`` becomes a skill of this hub (its
folder copied from ``skills/<install_path>``, its source, identifier, trust, revision and
install time kept, its content hash computed again), and its taps become taps here. The
skills plugin's import leaves these folders to this one."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from hermes_commons.skill_md import NAME_RULE
from hermes_plugin_skills_hub.hub import FOLDER
from hermes_plugin_skills_hub.lock import Lock
from hermes_plugin_skills_hub.packages import content_hash, folder_files
from hermes_plugin_skills_hub.taps import Taps
from hermes_sdk.importing import HomeImport, ImportSection

__all__ = ["SOURCE_KINDS", "import_hub"]

SOURCE_KINDS = frozenset({"hermes-agent"})
KIND = "skills-hub"
TRUST = {"builtin": "official", "trusted": "trusted"}


def _identifier(source: str, identifier: str, name: str) -> tuple[str, str]:
    """(source, identifier) as this hub writes them."""
    if source in ("skills.sh", "skills-sh"):
        return "skills-sh", "skills-sh/" + identifier.split("/", 1)[1] if identifier.startswith(
            ("skills.sh/", "skills-sh/")
        ) else f"skills-sh/{identifier}"
    if source == "github":
        return "github", identifier if identifier.startswith("github:") else f"github:{identifier}"
    if source == "claude-marketplace":
        return source, "marketplace:" + identifier.removeprefix("github:")
    if source == "clawhub":
        return source, "clawhub:" + identifier.rsplit("/", maxsplit=1)[-1].removeprefix("clawhub:")
    if source == "official":
        return source, f"official/{name}"
    return source, identifier


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def import_hub(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["skills/.hub/lock.json", "skills/.hub/taps.json"])
    skills = Path(request.source) / "skills"
    data = _read(skills / ".hub" / "lock.json")
    installed = data.get("installed") if isinstance(data, dict) else None
    root = Path(request.target) / FOLDER
    if isinstance(installed, dict) and installed:
        lock = Lock(root)
        entries = lock.entries()
        for name, entry in sorted(installed.items()):
            if not isinstance(entry, dict):
                continue
            folder = skills / str(entry.get("install_path") or name)
            if (
                not folder.resolve().is_relative_to(skills.resolve())
                or not (folder / "SKILL.md").is_file()
            ):
                section.note(
                    f"{name}: its lock entry points at {folder}, which holds no skill; left out"
                )
                continue
            if name in entries or (root / "installed" / name).exists():
                section.skip(name, "installed from the hub here already (kept as it is)")
                continue
            if not NAME_RULE.match(name):
                section.note(f"{name!r} cannot be a skill's folder name here; left out")
                continue
            if any(p.is_symlink() for p in [folder, *folder.rglob("*")]):
                section.note(f"{name}: it holds a symbolic link, which the hub refuses; left out")
                continue
            source, identifier = _identifier(
                str(entry.get("source") or "url"), str(entry.get("identifier") or ""), name
            )
            section.add(f"{name} ({source}: {identifier})")
            if request.dry_run:
                continue
            target = root / "installed" / name
            shutil.copytree(folder, target)
            given = entry.get("metadata")
            metadata: dict[str, Any] = given if isinstance(given, dict) else {}
            with lock.changing() as current:
                current[name] = {
                    "source": source,
                    "identifier": identifier,
                    "trust": TRUST.get(str(entry.get("trust_level")), "community"),
                    "content_hash": content_hash(folder_files(target)),
                    "files": sorted(folder_files(target)),
                    "revision": str(metadata.get("source_revision") or ""),
                    "source_url": str(metadata.get("source_url") or ""),
                    "scan": {
                        "scanner": "hermes-agent",
                        "verdict": str(entry.get("scan_verdict") or ""),
                    },
                    "installed_at": str(
                        entry.get("installed_at")
                        or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                    ),
                    "updated_at": str(entry.get("updated_at") or entry.get("installed_at") or ""),
                    "imported_from": "hermes-agent",
                }
            lock.log("IMPORT", name, identifier)
    taps = _read(skills / ".hub" / "taps.json")
    if isinstance(taps, dict) and isinstance(taps.get("taps"), list):
        mine = Taps(root)
        for tap in taps["taps"]:
            if not isinstance(tap, dict) or not isinstance(tap.get("repo"), str):
                continue
            label = f"tap {tap['repo']}"
            if request.dry_run:
                section.add(label)
                continue
            try:
                section.add(label + " - " + mine.add(tap["repo"], str(tap.get("path") or "")))
            except Exception as exc:  # noqa: BLE001 - one bad tap is a note, not a failed import
                section.skip(label, str(exc))
    return section
