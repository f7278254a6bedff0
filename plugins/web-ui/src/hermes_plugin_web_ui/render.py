"""Text into safe HTML: Markdown replies (markdown-it, raw HTML off, code highlighted by
Pygments), search snippets with their matches marked, diffs and times."""

from __future__ import annotations

import re
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from hermes_sdk.media import Attachment

__all__ = ["code_css", "diff_html", "markdown_html", "media_url", "snippet_html", "when"]

_HIGHLIGHT_CLASS = "hl"
_MAX_HIGHLIGHTED = 200_000
"""Longer code blocks are shown plain: highlighting them costs more than it helps."""


def _highlight(code: str, language: str, _attrs: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    if not language or len(code) > _MAX_HIGHLIGHTED:
        return ""  # markdown-it escapes it itself
    try:
        lexer = get_lexer_by_name(language.split(maxsplit=1)[0])
    except ClassNotFound:
        return ""
    formatter = HtmlFormatter(nowrap=True, classprefix="")
    # markdown-it keeps a block that starts with <pre> as it is: the class brings the colours.
    return f'<pre class="{_HIGHLIGHT_CLASS}"><code>{highlight(code, lexer, formatter)}</code></pre>'


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # "html": False: a reply's <script> is text, never markup. Links keep markdown-it's
    # own check, which refuses javascript:, vbscript: and data: (but images) URLs.
    parser = MarkdownIt("commonmark", {"html": False, "highlight": _highlight, "breaks": True})
    parser.enable(["table", "strikethrough"])
    return parser


def markdown_html(text: str) -> Markup:
    """A reply as HTML; links open in a new tab without telling the target where from."""
    html = _markdown().render(text)
    html = html.replace("<a href=", '<a rel="noopener noreferrer" target="_blank" href=')
    return Markup(html)


@lru_cache(maxsize=1)
def code_css() -> str:
    """The highlighting colours, for the stylesheet."""
    from pygments.formatters import HtmlFormatter

    formatter = HtmlFormatter(style="friendly", classprefix="")
    styles = formatter.get_style_defs(f".{_HIGHLIGHT_CLASS}")  # type: ignore[no-untyped-call]  # untyped in types-Pygments
    return str(styles)


def snippet_html(snippet: str, query: str) -> Markup:
    """A search hit's snippet (the store marks matches ``[like this]``) with the matches in
    ``<mark>``. A bracket pair is a mark only if it holds a word of the query or the query
    itself, so brackets in the text (code, JSON) stay as they are."""
    words = {w.lower() for w in re.findall(r"\w+", query)} | {query.lower().strip()}
    parts: list[str] = []
    position = 0
    for match in re.finditer(r"\[([^\[\]]{1,200})\]", snippet):
        inner = match.group(1)
        lowered = inner.lower()
        marked = lowered in words or any(w and w in lowered for w in words if len(w) >= 3)
        if not marked:
            continue
        parts.append(str(escape(snippet[position : match.start()])))
        parts.append(f"<mark>{escape(inner)}</mark>")
        position = match.end()
    parts.append(str(escape(snippet[position:])))
    return Markup("".join(parts))


def diff_html(diff: str) -> Markup:
    """A unified diff, each line classed (added, removed, hunk) for colour."""
    lines = []
    for line in diff.splitlines():
        kind = ""
        if line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        lines.append(f'<span class="{kind}">{escape(line)}</span>' if kind else str(escape(line)))
    return Markup("\n".join(lines))


def when(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def media_url(attachment: Attachment) -> str:
    """Where the page fetches a message's file: by its name in the media cache (the
    content's hash), never by a path."""
    return f"/media/{Path(attachment.path).name}"
