"""Markdown as the model writes it, as a Matrix message: the text itself as ``body`` (the
plain fallback every client shows) and HTML as ``formatted_body``. Raw HTML in the text is
escaped, never passed on, so model output cannot inject markup."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["message_content"]


@lru_cache(maxsize=1)
def _renderer() -> Any:
    from markdown_it import MarkdownIt

    return (
        MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True})
        .enable("strikethrough")
        .enable("table")
    )


def message_content(markdown: str, msgtype: str = "m.text") -> dict[str, Any]:
    html = str(_renderer().render(markdown)).strip()
    content: dict[str, Any] = {"msgtype": msgtype, "body": markdown, "m.mentions": {}}
    if html and html != f"<p>{_escape(markdown)}</p>":
        content["format"] = "org.matrix.custom.html"
        content["formatted_body"] = html
    return content


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )
