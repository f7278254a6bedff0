"""``web_search`` and ``web_extract``: handlers on the event loop, one guarded client per
process, results cached per session for ``web.cache_seconds``, requests bounded by
``web.concurrency``."""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from hermes_commons.scan import as_untrusted
from hermes_commons.ssrf import Refused, SsrfGuard
from hermes_commons.ssrf_http import guarded_client
from hermes_plugin_toolset_web.extract import page_text
from hermes_plugin_toolset_web.fetch import fetch
from hermes_plugin_toolset_web.search import SearchFailed, backend_for
from hermes_plugin_toolset_web.settings import WebSettings, settings_from
from hermes_sdk.tooling import ToolContext

__all__ = ["web_extract", "web_search"]

MAX_URLS = 10
SUMMARY_INSTRUCTIONS = (
    "Summarize this web page for an AI agent: what it says, with the facts, numbers, names "
    "and links that matter. Plain text, at most 400 words."
)


class _Web:
    """What the tools share in one process, built for the settings in effect."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self.guard = SsrfGuard(settings.allow_private_hosts)
        self.client: httpx.AsyncClient | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.slots = asyncio.Semaphore(settings.concurrency)
        self.cache: dict[tuple[str, str], tuple[float, str]] = {}

    def http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self.client is None or self.loop is not loop:  # a client belongs to one loop
            self.client, self.loop = guarded_client(self.guard, self.settings.timeout_seconds), loop
            self.slots = asyncio.Semaphore(self.settings.concurrency)
        return self.client

    def cached(self, session: str, key: str) -> str | None:
        hit = self.cache.get((session, key))
        if hit is None or time.monotonic() - hit[0] > self.settings.cache_seconds:
            return None
        return hit[1]

    def keep(self, session: str, key: str, value: str) -> str:
        now = time.monotonic()
        if len(self.cache) > 500:  # old entries go first
            self.cache = {
                k: v for k, v in self.cache.items() if now - v[0] <= self.settings.cache_seconds
            }
        self.cache[(session, key)] = (now, value)
        return value


_shared: dict[str, _Web] = {}


def _web(context: ToolContext) -> _Web:
    settings = settings_from(context.config)
    key = settings.model_dump_json()
    if key not in _shared:
        _shared.clear()
        _shared[key] = _Web(settings)
    return _shared[key]


async def web_search(query: str, limit: int = 5, *, context: ToolContext) -> str:
    web = _web(context)
    limit = max(1, min(int(limit), 20))
    key = json.dumps(["search", query, limit])
    cached = web.cached(context.session_id, key)
    if cached is not None:
        return cached
    secrets = {
        name: value
        for name in ("BRAVE_API_KEY", "TAVILY_API_KEY")
        if (value := context.secret(name))
    }
    try:
        backend = backend_for(web.settings, secrets)
        client = web.http()  # first: a new loop gets a new client and new slots
        async with web.slots:
            results = await backend.search(client, query, limit)
    except (SearchFailed, Refused) as exc:
        raise RuntimeError(str(exc)) from None
    except httpx.HTTPError as exc:
        raise RuntimeError(f"the search failed: {type(exc).__name__}: {exc}") from None
    if not results:
        return web.keep(context.session_id, key, f"no results for {query!r}")
    lines = [
        f"{n}. {r.title}\n   {r.url}\n   {r.snippet}".rstrip() for n, r in enumerate(results, 1)
    ]
    return web.keep(context.session_id, key, "\n".join(lines))


async def _one(web: _Web, url: str, context: ToolContext, summarize: bool) -> str:
    key = json.dumps(["extract", url, summarize])
    cached = web.cached(context.session_id, key)
    if cached is not None:
        return cached
    try:
        client = web.http()  # first: a new loop gets a new client and new slots
        async with web.slots:
            page = await fetch(client, web.guard, url, web.settings.max_page_bytes)
    except Refused as exc:
        return f"## {url}\n{exc}"
    except httpx.HTTPError as exc:
        return f"## {url}\nthe page could not be fetched: {type(exc).__name__}: {exc}"
    if page.status >= 400:
        return f"## {url}\nHTTP {page.status}: the page was not served"
    text, title = await asyncio.to_thread(page_text, page, web.settings.page_chars)
    if summarize and len(text) > 4000 and context.complete is not None:
        try:
            text = await asyncio.to_thread(context.ask_model, SUMMARY_INSTRUCTIONS, text)
            text = f"[summarized by the auxiliary model]\n{text}"
        except RuntimeError as exc:
            text = f"[no summary ({exc}); the page as it is]\n{text}"
    heading = f"## {title} ({page.url})" if title else f"## {page.url}"
    # A page is anyone's text (hidden white text included): data, scanned, never orders.
    text = as_untrusted(text, f"the web page {page.url}")
    return web.keep(context.session_id, key, f"{heading}\n{text}")


async def web_extract(
    urls: list[str] | str, summarize: bool = False, *, context: ToolContext
) -> str:
    if isinstance(urls, str):  # models sometimes send one URL bare; the schema says a list
        urls = [urls]
    if not urls:
        raise RuntimeError("give at least one URL")
    if len(urls) > MAX_URLS:
        raise RuntimeError(f"at most {MAX_URLS} URLs at once; split the list")
    web = _web(context)
    pages = await asyncio.gather(*(_one(web, url, context, summarize) for url in urls))
    return "\n\n".join(pages)
