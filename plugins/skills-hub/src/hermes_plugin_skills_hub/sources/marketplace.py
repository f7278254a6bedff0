"""Claude Code plugin marketplaces: a GitHub repository whose
``.claude-plugin/marketplace.json`` lists plugins, each with a ``source`` (a path in the
repository, under ``metadata.pluginRoot`` when given, or another GitHub repository) and,
optionally, ``skills`` (paths of skill folders inside the plugin). A plugin that lists no
skills offers every SKILL.md folder under it. Installs are GitHub installs, recorded with
this source's name."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from typing import Any

from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package
from hermes_plugin_skills_hub.sources import Source, matches
from hermes_plugin_skills_hub.sources.github import GitHubSource

__all__ = ["MarketplaceSource"]

MANIFEST = ".claude-plugin/marketplace.json"


class MarketplaceSource(Source):
    name = "claude-marketplace"
    catalog = True

    def __init__(self, repos: Sequence[str], github: GitHubSource) -> None:
        self.repos = list(repos)
        self.github = github

    def owns(self, identifier: str) -> bool:
        return identifier.startswith("marketplace:")

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        found: list[Listing] = []
        for repo in self.repos:
            found += await self.listing(fetcher, repo)
        return [
            item
            for item in found
            if matches(query, item.name, item.description, item.extra.get("plugin", ""))
        ][:limit]

    async def listing(self, fetcher: Fetcher, repo: str) -> list[Listing]:
        tree = await self.github.tree(fetcher, repo, "")
        if MANIFEST not in tree.blobs:
            raise HubError(f"{repo} has no {MANIFEST}")
        try:
            data: Any = json.loads(
                await self.github.raw(fetcher, repo, MANIFEST, tree.revision, 1_000_000)
            )
        except ValueError:
            raise HubError(f"{repo}/{MANIFEST} is not JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("plugins"), list):
            raise HubError(f"{repo}/{MANIFEST} lists no plugins")
        root = str((data.get("metadata") or {}).get("pluginRoot") or "").strip("./")
        listings = []
        for plugin in data["plugins"]:
            if not isinstance(plugin, dict):
                continue
            where = _plugin_place(plugin.get("source"), repo, root)
            if where is None:
                continue
            plugin_repo, base = where
            paths = plugin.get("skills")
            if isinstance(paths, list) and paths:
                folders = [_joined(base, str(p)) for p in paths]
            else:
                other = (
                    tree
                    if plugin_repo == repo
                    else await self.github.tree(fetcher, plugin_repo, "")
                )
                folders = other.skill_folders(base)
            for folder in folders:
                if folder.startswith(".."):
                    continue
                skill = folder.rsplit("/", 1)[-1]
                listings.append(
                    Listing(
                        f"marketplace:{plugin_repo}/{folder}",
                        skill,
                        str(plugin.get("description") or ""),
                        self.name,
                        self.github.trust(plugin_repo),
                        {"plugin": str(plugin.get("name") or ""), "marketplace": repo},
                    )
                )
        return listings

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        """``marketplace:OWNER/REPO/PATH``: the skill folder, fetched from GitHub."""
        packages = await self.github.fetch(
            fetcher, "github:" + identifier.removeprefix("marketplace:")
        )
        for package in packages:
            package.source = self.name
            package.identifier = "marketplace:" + package.identifier.removeprefix("github:")
        return packages


def _plugin_place(source: Any, repo: str, root: str) -> tuple[str, str] | None:
    """(repository, folder) a plugin's ``source`` points at; None for a kind not read (a
    git URL that is not GitHub, a path leaving the repository)."""
    if isinstance(source, str):
        if not source.startswith("."):
            return None
        folder = _joined(root, source)
        return None if folder.startswith("..") else (repo, folder)
    repo_named = isinstance(source, dict) and isinstance(source.get("repo"), str)
    if repo_named and source.get("source") == "github" and source["repo"].count("/") == 1:
        return str(source["repo"]), _joined("", str(source.get("path") or "."))
    return None


def _joined(base: str, relative: str) -> str:
    joined = posixpath.normpath(posixpath.join(base or ".", relative))
    return "" if joined == "." else joined
