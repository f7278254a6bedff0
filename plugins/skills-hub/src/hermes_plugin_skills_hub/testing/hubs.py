"""The stand-ins (see the package's docstring)."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["FakeClawHub", "FakeGitHub", "FakeSkillsSh", "StaticSite", "skill_md"]


def skill_md(name: str, description: str, body: str = "Follow these steps.") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{body}\n".encode()


@dataclass
class Seen:
    method: str
    path_qs: str
    headers: dict[str, str]


class _Fake(LoopbackApp):
    def __init__(self, name: str) -> None:
        self.requests: list[Seen] = []
        app = web.Application(middlewares=[self._record])
        self.routes(app)
        super().__init__(app, name)

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append(Seen(request.method, request.path_qs, dict(request.headers)))
        response: web.StreamResponse = await handler(request)
        return response

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeGitHub(_Fake):
    """``repos["owner/repo"] = {"path/in/repo": b"content"}``; ``links`` are paths served
    as symbolic links; ``rate_limited`` answers every call as an exhausted anonymous
    limit does."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.links: set[str] = set()
        self.rate_limited = False
        super().__init__("fake-github")

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/repos/{owner}/{repo}", self._repo)
        app.router.add_get("/repos/{owner}/{repo}/commits/{ref}", self._commit)
        app.router.add_get("/repos/{owner}/{repo}/git/trees/{sha}", self._tree)
        app.router.add_get("/repos/{owner}/{repo}/contents/{path:.*}", self._contents)
        app.router.add_get("/raw/{owner}/{repo}/{ref}/{path:.*}", self._raw)

    def revision(self, repo: str) -> str:
        digest = hashlib.sha1()
        for path, content in sorted(self.repos[repo].items()):
            digest.update(path.encode() + b"\0" + content)
        return digest.hexdigest()

    def _files(self, request: web.Request) -> tuple[str, dict[str, bytes]]:
        if self.rate_limited:
            raise web.HTTPForbidden(
                text='{"message": "API rate limit exceeded for 127.0.0.1.", "documentation_url": '
                '"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}',
                content_type="application/json",
                headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9999999999"},
            )
        repo = f"{request.match_info['owner']}/{request.match_info['repo']}"
        if repo not in self.repos:
            raise web.HTTPNotFound(text='{"message": "Not Found"}', content_type="application/json")
        return repo, self.repos[repo]

    async def _repo(self, request: web.Request) -> web.Response:
        repo, _ = self._files(request)
        return web.json_response({"full_name": repo, "default_branch": "main", "private": False})

    def tree_sha(self, repo: str) -> str:
        return hashlib.sha1(b"tree " + self.revision(repo).encode()).hexdigest()

    async def _commit(self, request: web.Request) -> web.Response:
        """A branch or tag resolves to the one commit this fake has (``main``, ``v1``, or
        the commit itself)."""
        repo, _ = self._files(request)
        if request.match_info["ref"] not in ("main", "v1", self.revision(repo)):
            raise web.HTTPUnprocessableEntity(
                text='{"message": "No commit found for SHA"}', content_type="application/json"
            )
        sha = self.revision(repo)
        return web.json_response({"sha": sha, "commit": {"tree": {"sha": self.tree_sha(repo)}}})

    async def _tree(self, request: web.Request) -> web.Response:
        repo, files = self._files(request)
        if request.match_info["sha"] not in (self.revision(repo), self.tree_sha(repo)):
            raise web.HTTPNotFound(text='{"message": "Not Found"}', content_type="application/json")
        folders = {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)}
        tree: list[dict[str, object]] = [
            {"path": f, "mode": "040000", "type": "tree", "sha": "0" * 40} for f in sorted(folders)
        ]
        for path in sorted(files):
            mode = "120000" if f"{repo}/{path}" in self.links else "100644"
            tree.append(
                {
                    "path": path,
                    "mode": mode,
                    "type": "blob",
                    "sha": hashlib.sha1(files[path]).hexdigest(),
                    "size": len(files[path]),
                }
            )
        return web.json_response(
            {"sha": self.tree_sha(repo), "url": "", "tree": tree, "truncated": False}
        )

    @property
    def raw_url(self) -> str:
        """What ``skills_hub.github_raw`` names for this fake (raw.githubusercontent.com's
        ``/OWNER/REPO/REF/PATH``)."""
        return f"{self.url}/raw"

    async def _raw(self, request: web.Request) -> web.Response:
        repo, files = self._files(request)
        if request.match_info["ref"] not in ("main", "v1", self.revision(repo)):
            raise web.HTTPNotFound(text="404: Not Found")
        content = files.get(request.match_info["path"])
        if content is None:
            raise web.HTTPNotFound(text="404: Not Found")
        return web.Response(body=content, content_type="text/plain")

    async def _contents(self, request: web.Request) -> web.Response:
        repo, files = self._files(request)
        if request.query.get("ref", "main") not in ("main", "v1", self.revision(repo)):
            raise web.HTTPNotFound(
                text='{"message": "No commit found for the ref"}', content_type="application/json"
            )
        path = request.match_info["path"].strip("/")
        if path in files:
            if "raw" in request.headers.get("Accept", ""):
                return web.Response(body=files[path], content_type="application/octet-stream")
            return web.json_response(
                {
                    "type": "file",
                    "path": path,
                    "name": path.rsplit("/", 1)[-1],
                    "encoding": "base64",
                    "content": base64.b64encode(files[path]).decode(),
                }
            )
        prefix = f"{path}/" if path else ""
        children = sorted({p[len(prefix) :].split("/")[0] for p in files if p.startswith(prefix)})
        if not children:
            raise web.HTTPNotFound(text='{"message": "Not Found"}', content_type="application/json")
        return web.json_response(
            [
                {"name": c, "path": prefix + c, "type": "file" if prefix + c in files else "dir"}
                for c in children
            ]
        )


@dataclass
class ClawSkill:
    summary: str
    versions: dict[str, dict[str, bytes]] = field(default_factory=dict)
    suspicious: bool = False


class FakeClawHub(_Fake):
    """``skills["slug"] = ClawSkill(summary, {"1.0.0": files})``; the newest version is the
    last one added. ``busy`` answers the next that many downloads with 429."""

    def __init__(self) -> None:
        self.skills: dict[str, ClawSkill] = {}
        self.busy = 0
        super().__init__("fake-clawhub")

    def add(self, slug: str, summary: str, version: str, files: dict[str, bytes]) -> None:
        self.skills.setdefault(slug, ClawSkill(summary)).versions[version] = files

    @property
    def base_url(self) -> str:
        return f"{self.url}/api/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/search", self._search)
        app.router.add_get("/api/v1/skills", self._list)
        app.router.add_get("/api/v1/skills/{slug}", self._skill)
        app.router.add_get("/api/v1/download", self._download)

    def _item(self, slug: str) -> dict[str, Any]:
        skill = self.skills[slug]
        latest = list(skill.versions)[-1]
        return {
            "slug": slug,
            "displayName": slug.replace("-", " ").title(),
            "summary": skill.summary,
            "tags": {"latest": latest},
            "stats": {"downloads": 7},
            "latestVersion": {"version": latest},
        }

    async def _search(self, request: web.Request) -> web.Response:
        words = request.query.get("q", "").lower().split()
        hits = [
            {
                "score": 1.0,
                "slug": s,
                "displayName": s,
                "summary": k.summary,
                "version": list(k.versions)[-1],
                "updatedAt": 0,
            }
            for s, k in self.skills.items()
            if all(w in f"{s} {k.summary}".lower() for w in words)
        ]
        return web.json_response({"results": hits[: int(request.query.get("limit", "20"))]})

    async def _list(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"items": [self._item(s) for s in self.skills], "nextCursor": None}
        )

    async def _skill(self, request: web.Request) -> web.Response:
        slug = request.match_info["slug"]
        if slug not in self.skills:
            raise web.HTTPNotFound(text='{"error": "not found"}', content_type="application/json")
        item = self._item(slug)
        body = {
            "skill": {k: v for k, v in item.items() if k != "latestVersion"},
            "latestVersion": item["latestVersion"],
            "owner": {"handle": "someone"},
        }
        if self.skills[slug].suspicious:
            body["moderation"] = {"isSuspicious": True}
        return web.json_response(body)

    async def _download(self, request: web.Request) -> web.Response:
        if self.busy > 0:
            self.busy -= 1
            raise web.HTTPTooManyRequests(text="rate limited", headers={"Retry-After": "1"})
        slug, version = request.query.get("slug", ""), request.query.get("version", "")
        files = self.skills.get(slug, ClawSkill("")).versions.get(version)
        if files is None:
            raise web.HTTPNotFound(
                text='{"error": "no such version"}', content_type="application/json"
            )
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for path, content in files.items():
                archive.writestr(path, content)
        return web.Response(body=buffer.getvalue(), content_type="application/zip")


class FakeSkillsSh(_Fake):
    """``listed = [("owner/repo", "skill", "description", installs)]``."""

    def __init__(self) -> None:
        self.listed: list[tuple[str, str, str, int]] = []
        super().__init__("fake-skills-sh")

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        words = request.query.get("q", "").lower().split()
        skills = [
            {
                "id": f"{repo}/{skill}",
                "skillId": skill,
                "name": skill,
                "installs": installs,
                "source": repo,
            }
            for repo, skill, about, installs in self.listed
            if all(w in f"{skill} {about}".lower() for w in words)
        ]
        return web.json_response(
            {
                "query": request.query.get("q", ""),
                "searchType": "fuzzy",
                "skills": skills,
                "count": len(skills),
                "duration_ms": 1,
            }
        )


class StaticSite(_Fake):
    """``files["/path"] = b"content"``, served as they are (JSON for .json)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        super().__init__("static-site")

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/{path:.*}", self._file)

    async def _file(self, request: web.Request) -> web.Response:
        content = self.files.get(request.path)
        if content is None:
            raise web.HTTPNotFound()
        kind = "application/json" if request.path.endswith(".json") else "text/markdown"
        return web.Response(body=content, content_type=kind)
