"""A SKILL.md at a plain URL (``https://example.com/skills/pdf/SKILL.md``): the file alone,
since a web server cannot list the folder beside it."""

from __future__ import annotations

from urllib.parse import urlsplit

from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package
from hermes_plugin_skills_hub.sources import Source

__all__ = ["UrlSource"]


class UrlSource(Source):
    name = "url"

    def owns(self, identifier: str) -> bool:
        return identifier.startswith(("http://", "https://")) and identifier.endswith(".md")

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        return []

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        body = await fetcher.get(identifier, limit=fetcher.settings.max_file_bytes)
        assert body is not None
        path = urlsplit(identifier).path
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[-1] == "SKILL.md":
            hint = parts[-2]
        elif parts:
            hint = parts[-1].removesuffix(".md")
        else:
            raise HubError(f"{identifier}: no file name to go by")
        return [
            Package(
                identifier,
                self.name,
                "community",
                {"SKILL.md": body},
                source_url=identifier,
                name_hint=hint,
            )
        ]
