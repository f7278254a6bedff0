"""Any site's skills, per the Agent Skills discovery draft: an index at
``/.well-known/agent-skills/index.json`` (entries list their files with a ``sha256:``
digest each, checked on fetch) or the older ``/.well-known/skills/index.json`` (files as
names), and each skill's files under ``.../NAME/``. Identifiers are hermes-agent's:
``well-known:https://HOST/.well-known/skills/NAME``. Sites listed in
``skills_hub.well_known`` are searched; any other is searched by giving its URL as the
query."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package, safe_path
from hermes_plugin_skills_hub.sources import Source, matches

__all__ = ["WellKnownSource"]

FOLDERS = ("/.well-known/agent-skills", "/.well-known/skills")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class WellKnownSource(Source):
    name = "well-known"
    catalog = True

    def __init__(self, sites: Sequence[str]) -> None:
        self.sites = list(sites)

    def owns(self, identifier: str) -> bool:
        return identifier.startswith("well-known:")

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        sites = list(self.sites)
        words = query
        if query.strip().startswith(("http://", "https://")):
            site, _, words = query.strip().partition(" ")
            sites = [site]
        found: list[Listing] = []
        for site in sites:
            base, entries = await self.index(fetcher, site)
            for entry in entries:
                listing = Listing(
                    f"well-known:{base}/{entry['name']}",
                    str(entry["name"]),
                    str(entry.get("description") or ""),
                    self.name,
                    "community",
                    {"site": urlsplit(base).netloc},
                )
                if matches(words, listing.name, listing.description):
                    found.append(listing)
        return found[:limit]

    async def index(self, fetcher: Fetcher, site: str) -> tuple[str, list[dict[str, Any]]]:
        """(the skills folder's URL, the index's entries) of a site (or of an index or
        skills folder URL)."""
        parts = urlsplit(site.rstrip("/"))
        origin = f"{parts.scheme}://{parts.netloc}"
        given = next((f for f in FOLDERS if f"{parts.path}/".startswith(f"{f}/")), None)
        for folder in [given] if given else FOLDERS:
            data = await fetcher.json(f"{origin}{folder}/index.json", missing_ok=True)
            if data is None:
                continue
            entries = data.get("skills") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise HubError(f"{origin}{folder}/index.json has no skills list")
            good = [
                e for e in entries if isinstance(e, dict) and NAME.match(str(e.get("name", "")))
            ]
            return f"{origin}{folder}", good
        raise HubError(
            f"{origin} publishes no skills index "
            "(/.well-known/agent-skills/ or /.well-known/skills/)"
        )

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        url = (
            identifier.removeprefix("well-known:")
            .split("#")[0]
            .removesuffix("/SKILL.md")
            .rstrip("/")
        )
        base, _, name = url.rpartition("/")
        if not NAME.match(name) or not base.startswith(("http://", "https://")):
            raise HubError(f"{identifier!r} is not well-known:https://HOST/.well-known/skills/NAME")
        folder, entries = await self.index(fetcher, base)
        entry = next((e for e in entries if e.get("name") == name), None)
        if entry is None:
            raise HubError(f"{folder}/index.json lists no skill {name!r}")
        listed = entry.get("files") or ["SKILL.md"]
        files: dict[str, bytes] = {}
        if not isinstance(listed, list) or len(listed) > fetcher.settings.max_files:
            raise HubError(
                f"{name}: its files list is missing or over {fetcher.settings.max_files} files"
            )
        for item in listed:
            if isinstance(item, str):
                path, digest = item, None
            elif isinstance(item, dict) and isinstance(item.get("path"), str):
                path, digest = item["path"], item.get("digest")
                if not digest:  # the newer index promises a digest for every file
                    raise HubError(f"{name}: the index gives {path} no digest; refused")
            else:
                raise HubError(f"{name}: its index lists a file as {item!r}")
            relative = safe_path(path)
            body = await fetcher.get(
                f"{folder}/{name}/{quote(relative)}", limit=fetcher.settings.max_file_bytes
            )
            assert body is not None
            if digest and f"sha256:{hashlib.sha256(body).hexdigest()}" != str(digest).lower():
                raise HubError(
                    f"{name}/{relative} does not match the digest its index gives; refused"
                )
            files[relative] = body
        if "SKILL.md" not in files:
            raise HubError(f"{folder}/index.json lists no SKILL.md for {name}")
        return [
            Package(
                identifier=f"well-known:{folder}/{name}",
                source=self.name,
                trust="community",
                files=files,
                revision=str(entry.get("digest") or ""),
                source_url=f"{folder}/{name}/",
                name_hint=name,
            )
        ]
