"""``web_search`` and ``web_extract``: search and read the web through the SSRF guard.

Importing this is cheap: httpx, trafilatura and pypdf load when a tool first runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ConfigSectionSpec, ToolsetSpec, ToolSpec, hookimpl

TOOLSET = "web"


async def _search(query: str, limit: int = 5, *, context: Any) -> str:
    from hermes_plugin_toolset_web.tools import web_search

    return await web_search(query, limit, context=context)


async def _extract(urls: list[str], summarize: bool = False, *, context: Any) -> str:
    from hermes_plugin_toolset_web.tools import web_extract

    return await web_extract(urls, summarize, context=context)


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name=TOOLSET, description="search and read the web")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="web_search",
        description="Search the web. Returns up to `limit` results: title, URL and snippet. "
        "Read a result with web_extract.",
        handler=_search,
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to search for"},
                "limit": {"type": "integer", "description": "results wanted (1-20, default 5)"},
            },
            "required": ["query"],
        },
        toolset=TOOLSET,
        parallel_safe=True,
        takes_context=True,
    )
    yield ToolSpec(
        name="web_extract",
        description="Read web pages: each as Markdown (main text, headings, links, tables), "
        "PDFs as text. Private and local addresses are refused unless the user allowed them.",
        handler=_extract,
        parameters={
            "type": "object",
            "properties": {
                "urls": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "http(s) URLs, at most 10",
                },
                "summarize": {
                    "type": "boolean",
                    "description": "summarize long pages with the auxiliary model",
                },
            },
            "required": ["urls"],
        },
        toolset=TOOLSET,
        parallel_safe=True,
        takes_context=True,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="web",
        description="The web tools",
        model="hermes_plugin_toolset_web.settings:WebSettings",
    )
