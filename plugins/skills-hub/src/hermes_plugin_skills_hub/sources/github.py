"""GitHub repositories through the REST API: a skill folder (``github:OWNER/REPO/PATH``, or
hermes-agent's bare ``OWNER/REPO/PATH``), every skill under a folder or a whole repository
(``github:OWNER/REPO``), pinned to the commit's tree; and the taps, folders of skills whose
SKILL.md files are listed for search (grouped by the repository's ``skills.sh.json`` when it
has one). ``@REF`` after the identifier picks a branch, tag or commit."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hermes_commons.skill_md import SkillError, parse_skill_text
from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.packages import HubError, Listing, Package, safe_path
from hermes_plugin_skills_hub.sources import Source, matches

__all__ = ["GitHubSource", "Tree", "parse_id"]

_ID = re.compile(r"^(?:github:)?([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/([^@]*))?(?:@(.+))?$")
MAX_SKILLS = 100


def parse_id(identifier: str) -> tuple[str, str, str, str]:
    """(owner/repo, path, ref, canonical id) of a GitHub identifier; HubError if it is not."""
    hit = _ID.match(identifier.strip())
    if hit is None or identifier.startswith(("http:", "https:")):
        raise HubError(f"{identifier!r} is not github:OWNER/REPO[/PATH][@REF]")
    owner, repo, path, ref = hit.groups()
    path = (path or "").strip("/")
    if path:
        safe_path(path)
    canonical = f"github:{owner}/{repo}" + (f"/{path}" if path else "") + (f"@{ref}" if ref else "")
    return f"{owner}/{repo}", path, ref or "", canonical


@dataclass
class Tree:
    repo: str
    revision: str
    blobs: dict[str, str]
    """Path -> mode of every file (links are mode 120000)."""
    ref: str = ""
    """The branch, tag or commit asked for ("": the default branch)."""

    def skill_folders(self, under: str) -> list[str]:
        prefix = f"{under}/" if under else ""
        found = []
        for path in self.blobs:
            if (
                path.startswith(prefix)
                and path.endswith("SKILL.md")
                and path.rsplit("/", 1)[-1] == "SKILL.md"
            ):
                folder = path[: -len("SKILL.md")].rstrip("/")
                if not any(part.startswith((".git", "node_modules")) for part in folder.split("/")):
                    found.append(folder)
        return sorted(found)


class GitHubSource(Source):
    name = "github"
    catalog = True

    def __init__(
        self, api: str, raw_host: str, taps: Sequence[str], trusted: Sequence[str]
    ) -> None:
        self.api = api
        self.raw_host = raw_host
        self.taps = list(taps)
        self.trusted = {repo.lower() for repo in trusted}
        self._trees: dict[tuple[str, str], Tree] = {}

    def owns(self, identifier: str) -> bool:
        if identifier.startswith("github:"):
            return True
        return bool(_ID.match(identifier)) and identifier.count("/") >= 2 and ":" not in identifier

    def trust(self, repo: str) -> str:
        return "trusted" if repo.lower() in self.trusted else "community"

    async def tree(self, fetcher: Fetcher, repo: str, ref: str) -> Tree:
        """The files of ``repo`` at ``ref`` (its default branch when empty), pinned to the
        commit the ref names now: its files are then read at that commit."""
        known = self._trees.get((repo, ref))
        if known is not None:
            return known
        branch = ref
        if not branch:
            about = await fetcher.json(f"{self.api}/repos/{repo}")
            branch = (
                str(about.get("default_branch") or "main") if isinstance(about, dict) else "main"
            )
        commit = await fetcher.json(f"{self.api}/repos/{repo}/commits/{quote(branch, safe='')}")
        sha = commit.get("sha") if isinstance(commit, dict) else None
        if not isinstance(sha, str) or not sha:
            raise HubError(f"{repo}@{branch}: GitHub named no commit for it")
        data = await fetcher.json(f"{self.api}/repos/{repo}/git/trees/{sha}", recursive="1")
        if not isinstance(data, dict) or not isinstance(data.get("tree"), list):
            raise HubError(f"{repo}@{branch}: GitHub gave no file list")
        if data.get("truncated"):
            raise HubError(
                f"{repo} has too many files to list in one call; name the skill's folder"
            )
        blobs = {
            str(item["path"]): str(item.get("mode", "100644"))
            for item in data["tree"]
            if isinstance(item, dict) and item.get("type") == "blob" and "path" in item
        }
        tree = Tree(repo, sha, blobs, ref)
        self._trees[(repo, ref)] = tree
        return tree

    async def raw(
        self, fetcher: Fetcher, repo: str, path: str, revision: str, limit: int | None = None
    ) -> bytes:
        # From the raw host, not the API: 60 API calls an hour is all an anonymous user
        # has, and a tap's listing reads every SKILL.md in it.
        body = await fetcher.get(
            f"{self.raw_host}/{repo}/{quote(revision, safe='')}/{quote(path)}", limit=limit
        )
        assert body is not None
        return body

    async def fetch(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        repo, path, ref, _ = parse_id(identifier)
        tree = await self.tree(fetcher, repo, ref)
        folders = tree.skill_folders(path)
        if path and path in folders:
            folders = [path]
        if not folders:
            raise HubError(f"no SKILL.md in {repo}" + (f" under {path}" if path else ""))
        if len(folders) > MAX_SKILLS:
            raise HubError(
                f"{len(folders)} skills under {identifier}; at most {MAX_SKILLS} at once"
            )
        return [await self.package(fetcher, tree, folder, self.name) for folder in folders]

    async def package(self, fetcher: Fetcher, tree: Tree, folder: str, source: str) -> Package:
        prefix = f"{folder}/" if folder else ""
        nested = [f[len(prefix) :] + "/" for f in tree.skill_folders(folder) if f != folder]
        files: dict[str, bytes] = {}
        settings = fetcher.settings
        total = 0
        for path, mode in sorted(tree.blobs.items()):
            if not path.startswith(prefix):
                continue
            relative = safe_path(path[len(prefix) :])
            if relative.startswith(tuple(nested)):
                continue  # a skill inside this one is its own package
            if mode == "120000":
                raise HubError(
                    f"{tree.repo}/{path} is a symbolic link; refused (it may point anywhere)"
                )
            if len(files) >= settings.max_files:
                raise HubError(
                    f"{folder or tree.repo} has more than {settings.max_files} files; refused"
                )
            files[relative] = await self.raw(
                fetcher, tree.repo, path, tree.revision, settings.max_file_bytes
            )
            total += len(files[relative])
            if total > settings.max_skill_bytes:
                raise HubError(
                    f"{folder or tree.repo} is over {settings.max_skill_bytes} bytes; refused"
                )
        canonical = (
            f"github:{tree.repo}"
            + (f"/{folder}" if folder else "")
            + (f"@{tree.ref}" if tree.ref else "")
        )
        return Package(
            identifier=canonical,
            source=source,
            trust=self.trust(tree.repo),
            files=files,
            revision=tree.revision,
            source_url=f"https://github.com/{tree.repo}/tree/{tree.revision}/{folder}".rstrip("/"),
            name_hint=(folder.rsplit("/", 1)[-1] if folder else tree.repo.split("/")[1]),
        )

    async def search(self, fetcher: Fetcher, query: str, limit: int) -> list[Listing]:
        found: list[Listing] = []
        for tap in self.taps:
            found += await self.listing(fetcher, tap)
        return [item for item in found if matches(query, item.name, item.description)][:limit]

    async def listing(self, fetcher: Fetcher, tap: str) -> list[Listing]:
        """Every skill of a tap (OWNER/REPO[/PATH]) with the name and description its SKILL.md
        gives."""
        repo, path, ref, _ = parse_id(tap)
        tree = await self.tree(fetcher, repo, ref)
        groups = await self._groupings(fetcher, tree)
        folders = tree.skill_folders(path)[: MAX_SKILLS * 5]
        at_once = asyncio.Semaphore(8)

        async def read(folder: str) -> bytes:
            async with at_once:
                return await self.raw(fetcher, repo, f"{folder}/SKILL.md", tree.revision, 200_000)

        async with asyncio.TaskGroup() as group:  # one failure stops the other reads
            tasks = [group.create_task(read(folder)) for folder in folders]
        texts = [task.result() for task in tasks]
        listings = []
        for folder, text in zip(folders, texts, strict=True):
            name, description = describe(text, folder)
            extra = {"repo": repo}
            if name in groups:
                extra["category"] = groups[name]
            listings.append(
                Listing(
                    f"github:{repo}/{folder}" + (f"@{ref}" if ref else ""),
                    name,
                    description,
                    self.name,
                    self.trust(repo),
                    extra,
                )
            )
        return listings

    async def _groupings(self, fetcher: Fetcher, tree: Tree) -> dict[str, str]:
        """skill -> its grouping's title, from ``skills.sh.json`` at the repository's root."""
        if "skills.sh.json" not in tree.blobs:
            return {}
        try:
            data: Any = json.loads(
                await self.raw(fetcher, tree.repo, "skills.sh.json", tree.revision, 200_000)
            )
        except ValueError:
            return {}
        groups: dict[str, str] = {}
        for grouping in data.get("groupings", []) if isinstance(data, dict) else []:
            if isinstance(grouping, dict):
                for skill in grouping.get("skills") or []:
                    groups.setdefault(
                        str(skill).rsplit("/", 1)[-1], str(grouping.get("title") or "")
                    )
        return groups


def describe(text: bytes, folder: str) -> tuple[str, str]:
    """(name, description) of a SKILL.md, the folder's name when it cannot be read."""
    fallback = folder.rsplit("/", 1)[-1]
    try:
        skill = parse_skill_text(text.decode("utf-8"), Path(fallback))
    except (UnicodeDecodeError, SkillError):
        return fallback, ""
    return skill.name, skill.description
