"""skills.sh: its search API finds skills (``skills-sh/OWNER/REPO/SKILL``, as hermes-agent
writes them); their files come from the GitHub repository, where the skill's folder is
looked for where skills.sh's own installer looks (``SKILL``, ``skills/SKILL``,
``.agents/skills/SKILL``, ``.claude/skills/SKILL``, then any folder of that name)."""

from __future__ import annotations

import re

from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package
from hermes_plugin_skills_hub.sources import Source
from hermes_plugin_skills_hub.sources.github import GitHubSource

__all__ = ["SkillsShSource"]

_ID = re.compile(
    r"^(?:skills-sh|skills\.sh|skills-sh:)/?([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.:-]+)$"
)
PLACES = ("{s}", "skills/{s}", ".agents/skills/{s}", ".claude/skills/{s}")


class SkillsShSource(Source):
    name = "skills-sh"

    def __init__(self, site: str, github: GitHubSource) -> None:
        self.site = site
        self.github = github

    def owns(self, identifier: str) -> bool:
        return identifier.startswith(("skills-sh/", "skills.sh/", "skills-sh:"))

    def _canonical(self, identifier: str) -> str:
        owner, repo, skill = self._parts(identifier)
        return f"skills-sh/{owner}/{repo}/{skill}"

    def _parts(self, identifier: str) -> tuple[str, str, str]:
        hit = _ID.match(identifier.strip())
        if hit is None:
            raise HubError(f"{identifier!r} is not skills-sh/OWNER/REPO/SKILL")
        owner, repo, skill = hit.groups()
        return owner, repo, skill

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        if not query.strip():
            return []
        data = await fetcher.json(f"{self.site}/api/search", q=query, limit=str(limit))
        found = []
        for item in data.get("skills", []) if isinstance(data, dict) else []:
            if not isinstance(item, dict):
                continue
            source = str(item.get("source") or "")
            skill = str(item.get("skillId") or item.get("name") or "")
            if source.count("/") != 1 or not skill:
                continue
            repo = source
            found.append(
                Listing(
                    f"skills-sh/{repo}/{skill}",
                    str(item.get("name") or skill),
                    str(item.get("description") or ""),
                    self.name,
                    self.github.trust(repo),
                    {"installs": str(item.get("installs", "")), "repo": repo},
                )
            )
        return found[:limit]

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        owner, repo_name, skill = self._parts(identifier)
        repo = f"{owner}/{repo_name}"
        tree = await self.github.tree(fetcher, repo, "")
        folders = tree.skill_folders("")
        for place in PLACES:
            if place.format(s=skill) in folders:
                folder = place.format(s=skill)
                break
        else:
            named = [f for f in folders if f.rsplit("/", 1)[-1] == skill]
            if not named:
                raise HubError(f"{repo} has no skill folder named {skill!r}")
            folder = named[0]
        package = await self.github.package(fetcher, tree, folder, self.name)
        package.identifier = self._canonical(identifier)
        return [package]
