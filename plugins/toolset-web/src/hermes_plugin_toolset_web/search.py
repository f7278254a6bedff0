"""Search backends: each a small class with one ``search`` method. SearXNG (self-hosted),
Brave and Tavily over HTTP through the guarded client, DuckDuckGo through the ``ddgs``
package (keyless). Another plugin adds one through the entry point group
``hermes.web_search_backends`` (name = a class taking (settings, secrets))."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from hermes_plugin_toolset_web.settings import WebSettings

__all__ = ["SearchBackend", "SearchResult", "backend_for"]

ENTRY_POINTS = "hermes.web_search_backends"


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    name: str

    async def search(
        self, client: httpx.AsyncClient, query: str, limit: int
    ) -> list[SearchResult]: ...


class SearchFailed(Exception):
    """The backend did not answer usefully; the message says why, in one line."""


def _checked(response: httpx.Response, who: str) -> Any:
    if response.status_code in (401, 403):
        raise SearchFailed(f"{who} refused the key (HTTP {response.status_code}); check .env")
    if response.status_code == 429:
        raise SearchFailed(f"{who} is rate limiting (HTTP 429); try again later")
    if response.status_code >= 400:
        raise SearchFailed(f"{who} answered HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        raise SearchFailed(f"{who} did not answer JSON") from None


class SearXNG:
    name = "searxng"

    def __init__(self, settings: WebSettings, secrets: Mapping[str, str]) -> None:
        if not settings.search.searxng_url:
            raise SearchFailed("set web.search.searxng_url to your SearXNG (its JSON API on)")
        self.url = settings.search.searxng_url.rstrip("/") + "/search"

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchResult]:

        response = await client.get(self.url, params={"q": query, "format": "json"})
        data = _checked(response, "SearXNG")
        return [
            SearchResult(
                str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("content") or "")
            )
            for r in (data.get("results") or [])[:limit]
            if r.get("url")
        ]


class Brave:
    name = "brave"

    def __init__(self, settings: WebSettings, secrets: Mapping[str, str]) -> None:
        self.key = secrets.get("BRAVE_API_KEY")
        if not self.key:
            raise SearchFailed("BRAVE_API_KEY is not set: put it in .env")
        self.url = settings.search.brave_url

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchResult]:
        response = await client.get(
            self.url,
            params={"q": query, "count": limit},
            headers={"X-Subscription-Token": self.key or "", "Accept": "application/json"},
        )
        data = _checked(response, "Brave Search")
        results = (data.get("web") or {}).get("results") or []
        return [
            SearchResult(
                str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("description") or "")
            )
            for r in results[:limit]
            if r.get("url")
        ]


class Tavily:
    name = "tavily"

    def __init__(self, settings: WebSettings, secrets: Mapping[str, str]) -> None:
        self.key = secrets.get("TAVILY_API_KEY")
        if not self.key:
            raise SearchFailed("TAVILY_API_KEY is not set: put it in .env")
        self.url = settings.search.tavily_url

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchResult]:
        response = await client.post(
            self.url,
            json={"query": query, "max_results": limit},
            headers={"Authorization": f"Bearer {self.key}"},
        )
        data = _checked(response, "Tavily")
        return [
            SearchResult(
                str(r.get("title") or ""), str(r.get("url") or ""), str(r.get("content") or "")
            )
            for r in (data.get("results") or [])[:limit]
            if r.get("url")
        ]


class DuckDuckGo:
    """Keyless, through the ``ddgs`` package (its own HTTP client, to DuckDuckGo's public
    endpoints only)."""

    name = "duckduckgo"

    def __init__(self, settings: WebSettings, secrets: Mapping[str, str]) -> None:
        pass

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchResult]:
        def run() -> list[dict[str, Any]]:
            from ddgs import DDGS

            return list(DDGS().text(query, max_results=limit))

        try:
            found = await asyncio.to_thread(run)
        except Exception as exc:  # noqa: BLE001 - the package raises its own kinds
            raise SearchFailed(f"DuckDuckGo: {' '.join(str(exc).split())[:200]}") from None
        return [
            SearchResult(
                str(r.get("title") or ""), str(r.get("href") or ""), str(r.get("body") or "")
            )
            for r in found
            if r.get("href")
        ]


BUILT_IN: dict[str, type[Any]] = {
    "searxng": SearXNG,
    "brave": Brave,
    "tavily": Tavily,
    "duckduckgo": DuckDuckGo,
}


def backend_for(settings: WebSettings, secrets: Mapping[str, str]) -> SearchBackend:
    """The configured backend; SearchFailed (what to set) when it cannot be used."""
    name = settings.search.backend
    if name == "auto":
        if settings.search.searxng_url:
            name = "searxng"
        elif secrets.get("BRAVE_API_KEY"):
            name = "brave"
        elif secrets.get("TAVILY_API_KEY"):
            name = "tavily"
        else:
            name = "duckduckgo"
    chosen = BUILT_IN.get(name)
    if chosen is None:
        from importlib.metadata import entry_points

        found = {point.name: point for point in entry_points(group=ENTRY_POINTS)}
        if name not in found:
            known = ", ".join(sorted({*BUILT_IN, *found}))
            raise SearchFailed(f"unknown web.search.backend {name!r} (known: {known})")
        chosen = found[name].load()
    backend: SearchBackend = chosen(settings, secrets)
    return backend
