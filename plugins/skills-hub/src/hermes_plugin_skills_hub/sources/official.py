"""Hermes's optional skills, shipped with this plugin and installed by name
(``hermes skills install kubernetes-debugging``, or ``official/NAME``): written and
reviewed with Hermes, so ``official``, yet not in every home's index until asked for."""

from __future__ import annotations

from pathlib import Path

from hermes_commons.skill_md import SkillError, load_skill
from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package, folder_files
from hermes_plugin_skills_hub.sources import Source, matches

__all__ = ["OPTIONAL", "OfficialSource"]

OPTIONAL = Path(__file__).resolve().parent.parent / "optional"


class OfficialSource(Source):
    name = "official"
    catalog = True

    def __init__(self, folder: Path = OPTIONAL) -> None:
        self.folder = folder

    def names(self) -> list[str]:
        return sorted(p.parent.name for p in self.folder.glob("*/SKILL.md"))

    def owns(self, identifier: str) -> bool:
        return identifier.startswith("official/") or identifier in self.names()

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        found = []
        for name in self.names():
            try:
                skill = load_skill(self.folder / name)
            except SkillError:
                continue
            if matches(query, skill.name, skill.description):
                found.append(
                    Listing(
                        f"official/{name}", skill.name, skill.description, self.name, "official"
                    )
                )
        return found[:limit]

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        name = identifier.removeprefix("official/")
        folder = self.folder / name
        if name not in self.names():
            raise HubError(
                f"no optional skill {name!r}; hermes skills browse --source official lists them"
            )
        from hermes_plugin_skills_hub import __version__

        return [
            Package(
                f"official/{name}",
                self.name,
                "official",
                folder_files(folder),
                __version__,
                name_hint=name,
            )
        ]
