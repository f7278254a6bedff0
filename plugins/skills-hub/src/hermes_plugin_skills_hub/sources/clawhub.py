"""ClawHub (clawhub.ai), through its public HTTP API (``/api/v1``): search, a skill's
record and latest version, and the version's files as a zip. ``clawhub:SLUG`` (hermes-agent
wrote ``clawhub/SLUG``). Everything from ClawHub is ``community``: it has hosted malicious
skills, so the scanner's word is final."""

from __future__ import annotations

import io
import zipfile
from urllib.parse import quote, urlencode

from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package, safe_path
from hermes_plugin_skills_hub.sources import Source

__all__ = ["ClawHubSource"]


class ClawHubSource(Source):
    name = "clawhub"

    def __init__(self, api: str) -> None:
        self.api = api

    def owns(self, identifier: str) -> bool:
        return identifier.startswith(("clawhub:", "clawhub/"))

    def _slug(self, identifier: str) -> str:
        slug = (
            identifier.split(":", 1)[-1].split("/", 1)[-1].strip()
            if self.owns(identifier)
            else identifier
        )
        slug, _, _version = slug.partition("@")
        if not slug or "/" in slug:
            raise HubError(f"{identifier!r} is not clawhub:SLUG")
        return slug

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        if query.strip():
            data = await fetcher.json(f"{self.api}/search", q=query, limit=str(limit))
            items = data.get("results", []) if isinstance(data, dict) else []
        else:
            data = await fetcher.json(f"{self.api}/skills", limit=str(min(limit, 200)))
            items = data.get("items", []) if isinstance(data, dict) else []
        found = []
        for item in items:
            if not isinstance(item, dict) or not item.get("slug"):
                continue
            slug = str(item["slug"])
            version = item.get("version") or (item.get("latestVersion") or {}).get("version", "")
            found.append(
                Listing(
                    f"clawhub:{slug}",
                    slug,
                    str(item.get("summary") or item.get("displayName") or ""),
                    self.name,
                    "community",
                    {"version": str(version or "")},
                )
            )
        return found[:limit]

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        slug = self._slug(identifier)
        pinned = identifier.partition("@")[2]
        record = await fetcher.json(f"{self.api}/skills/{quote(slug, safe='')}", missing_ok=True)
        if record is None:
            raise HubError(f"ClawHub has no skill {slug!r}")
        moderation = record.get("moderation") if isinstance(record, dict) else None
        if isinstance(moderation, dict) and (
            moderation.get("isMalwareBlocked") or moderation.get("isSuspicious")
        ):
            raise HubError(f"ClawHub flags {slug!r} as suspicious; refused")
        version = pinned or str((record.get("latestVersion") or {}).get("version") or "")
        if not version:
            raise HubError(f"ClawHub lists no version of {slug!r}")
        archive = await fetcher.get(
            f"{self.api}/download?{urlencode({'slug': slug, 'version': version})}",
            limit=fetcher.settings.max_skill_bytes,
        )
        assert archive is not None
        files = unzip(
            archive,
            fetcher.settings.max_files,
            fetcher.settings.max_file_bytes,
            fetcher.settings.max_skill_bytes,
        )
        return [
            Package(
                identifier=f"clawhub:{slug}" + (f"@{pinned}" if pinned else ""),
                source=self.name,
                trust="community",
                files=files,
                revision=version,
                source_url=f"https://clawhub.ai/skills/{slug}",
                name_hint=slug,
            )
        ]


def unzip(data: bytes, max_files: int, max_file: int, max_total: int) -> dict[str, bytes]:
    """The files of a zip, sizes checked before anything is inflated (a zip bomb says small
    and inflates huge: the declared sizes are checked, then the read is capped too). A
    single top folder holding SKILL.md is taken as the skill's root."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise HubError("the download is not a zip file") from None
    members = [m for m in archive.infolist() if not m.is_dir()]
    if len(members) > max_files:
        raise HubError(f"the zip holds {len(members)} files; at most {max_files}")
    if sum(m.file_size for m in members) > max_total:
        raise HubError(f"the zip unpacks to more than {max_total} bytes; refused")
    files: dict[str, bytes] = {}
    for member in members:
        if member.file_size > max_file:
            raise HubError(f"{member.filename} is over {max_file} bytes; refused")
        if (member.external_attr >> 16) & 0o170000 == 0o120000:
            raise HubError(f"{member.filename} is a symbolic link; refused")
        with archive.open(member) as handle:
            content = handle.read(max_file + 1)
        if len(content) > max_file:
            raise HubError(f"{member.filename} inflates past {max_file} bytes; refused")
        files[safe_path(member.filename)] = content
    tops = {name.split("/", 1)[0] for name in files}
    if "SKILL.md" not in files and len(tops) == 1:
        top = tops.pop() + "/"
        if f"{top}SKILL.md" in files:
            files = {name[len(top) :]: content for name, content in files.items()}
    if "SKILL.md" not in files:
        raise HubError("the download holds no SKILL.md")
    return files
