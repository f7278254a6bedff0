"""Markdown as the model writes it, rendered to the HTML subset Telegram accepts.

Everything that is not markup is escaped (``&``, ``<``, ``>``), so model output can never
inject tags. Markup Telegram would still refuse (badly nested emphasis) makes the adapter
resend the text plain.
"""

from __future__ import annotations

import html
import re

__all__ = ["to_html"]

_FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_PLACEHOLDER = "\x00{}\x00"


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def _inline(text: str) -> str:
    spans: list[str] = []

    def keep(rendered: str) -> str:
        spans.append(rendered)
        return _PLACEHOLDER.format(len(spans) - 1)

    # Code spans and links first: nothing inside them is markup.
    text = _CODE_SPAN.sub(lambda m: keep(f"<code>{_escape(m.group(1))}</code>"), text)
    text = _LINK.sub(
        lambda m: keep(f'<a href="{html.escape(m.group(2))}">{_escape(m.group(1))}</a>'), text
    )
    text = _escape(text)
    text = _BOLD.sub(r"<b>\2</b>", text)
    text = _STRIKE.sub(r"<s>\1</s>", text)
    text = _ITALIC_STAR.sub(r"<i>\1</i>", text)
    text = _ITALIC_UNDERSCORE.sub(r"<i>\1</i>", text)
    return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], text)


def _line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        return f"<b>{_inline(heading.group(1))}</b>"
    if line.startswith(">"):
        return f"<blockquote>{_inline(line[1:].lstrip())}</blockquote>"
    bullet = _BULLET.match(line)
    if bullet:
        return f"{bullet.group(1)}• {_inline(line[bullet.end() :])}"
    return _inline(line)


def to_html(markdown: str) -> str:
    """Telegram HTML for ``markdown``: fenced blocks become ``<pre>``, code spans
    ``<code>``, ``**bold**``, ``*italic*``, ``~~strike~~``, links, headings (bold), quotes
    and bullets."""
    out: list[str] = []
    code: list[str] | None = None
    language = ""
    for line in markdown.split("\n"):
        fence = _FENCE.match(line.strip())
        if code is None and fence:
            code, language = [], fence.group(1)
        elif code is not None and line.strip() == "```":
            body = _escape("\n".join(code))
            attr = f' class="language-{language}"' if language else ""
            out.append(f"<pre><code{attr}>{body}</code></pre>")
            code = None
        elif code is not None:
            code.append(line)
        else:
            out.append(_line(line))
    if code is not None:  # an unclosed block: show it as code anyway
        out.append(f"<pre>{_escape(chr(10).join(code))}</pre>")
    return "\n".join(out)
