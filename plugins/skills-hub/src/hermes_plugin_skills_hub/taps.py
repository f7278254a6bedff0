"""Taps: GitHub folders of skills you subscribe to (``hermes skills tap add OWNER/REPO``),
searched with the ones ``skills_hub.taps`` names. Kept in ``skills-hub/taps.json`` as
hermes-agent keeps them: ``{"taps": [{"repo": "OWNER/REPO", "path": "skills/"}]}``."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_commons.files import atomic_write_text
from hermes_plugin_skills_hub.packages import HubError, safe_path
from hermes_plugin_skills_hub.sources.github import parse_id

__all__ = ["Taps"]


class Taps:
    def __init__(self, folder: Path) -> None:
        self.path = folder / "taps.json"

    def read(self) -> list[dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        taps = data.get("taps") if isinstance(data, dict) else None
        return (
            [t for t in taps if isinstance(t, dict) and isinstance(t.get("repo"), str)]
            if isinstance(taps, list)
            else []
        )

    def _damaged(self) -> bool:
        """A file that is there but is no taps file (adding would overwrite it)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except (OSError, ValueError):
            return True
        return not isinstance(data, dict) or not isinstance(data.get("taps", []), list)

    def identifiers(self) -> list[str]:
        return [
            f"{t['repo']}/{str(t.get('path') or '').strip('/')}".rstrip("/") for t in self.read()
        ]

    def _write(self, taps: list[dict[str, str]]) -> None:
        atomic_write_text(self.path, json.dumps({"taps": taps}, indent=1))

    def add(self, repo: str, path: str) -> str:
        owner_repo, _, _, _ = parse_id(repo)
        if repo.removeprefix("github:").count("/") != 1:
            raise HubError(f"{repo!r}: give OWNER/REPO, and the folder with --path")
        taps = self.read()
        clean = path.strip("/")
        if clean:
            safe_path(clean)
        if not taps and self._damaged():
            raise HubError(f"{self.path} cannot be read as taps; fix or remove it first")
        if any(
            t["repo"] == owner_repo and str(t.get("path") or "").strip("/") == clean for t in taps
        ):
            raise HubError(f"{owner_repo} ({clean or 'its top'}) is tapped already")
        taps.append({"repo": owner_repo, "path": f"{clean}/" if clean else ""})
        self._write(taps)
        return f"tapped {owner_repo}" + (f" ({clean}/)" if clean else "")

    def remove(self, repo: str) -> str:
        taps = self.read()
        kept = [t for t in taps if t["repo"] != repo.removeprefix("github:")]
        if len(kept) == len(taps):
            raise HubError(f"{repo} is not tapped (hermes skills tap list)")
        self._write(kept)
        return f"removed the tap {repo}"
