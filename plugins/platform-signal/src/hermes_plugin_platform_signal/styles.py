"""Markdown as the model writes it, as a Signal message: the text without its marks, and
signal-cli's ``textStyle`` ranges (``start:length:STYLE``, counted in UTF-16 units, as
Signal counts them) for what was bold, italic, struck through or code. Parsed with
markdown-it-py (CommonMark), so a ``*`` in a formula or a path is not taken for a mark
unless Markdown would take it so. Links keep their address beside the text."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["to_signal"]

_INLINE = {
    "strong": "BOLD",
    "em": "ITALIC",
    "s": "STRIKETHROUGH",
}


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    # Without text_join, an entity stays its own token: "&amp;" is shown as written (Signal
    # reads no HTML), not as "&".
    parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    return parser.disable("text_join")


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class _Writer:
    parts: list[str] = field(default_factory=list)
    position: int = 0
    styles: list[str] = field(default_factory=list)
    opened: dict[str, list[int]] = field(default_factory=dict)

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.position += _units(text)

    def open(self, style: str) -> None:
        self.opened.setdefault(style, []).append(self.position)

    def close(self, style: str) -> None:
        starts = self.opened.get(style)
        if starts:
            start = starts.pop()
            if self.position > start:
                self.styles.append(f"{start}:{self.position - start}:{style}")

    def styled(self, text: str, style: str) -> None:
        self.open(style)
        self.write(text)
        self.close(style)

    def text(self) -> str:
        return "".join(self.parts)


def to_signal(markdown: str) -> tuple[str, list[str]]:
    """The message's text and its styles."""
    out = _Writer()
    lists: list[list[int]] = []  # per open list: [next number] (0 for bullets)
    quoted = 0
    fresh_item = False
    new_list = False
    first_cell = False
    link: list[tuple[str, int]] = []  # (address, where its text began)
    for token in _parser().parse(markdown):
        kind = token.type
        starts_block = kind in (
            "paragraph_open", "heading_open", "fence", "code_block", "hr", "html_block",
            "list_item_open", "table_open",
        )  # fmt: skip
        if starts_block and not (kind == "paragraph_open" and (token.hidden or fresh_item)):
            if out.parts:
                tight = lists and (token.hidden or kind == "list_item_open")
                first_of_top_list = kind == "list_item_open" and new_list and len(lists) == 1
                out.write("\n" if tight and not first_of_top_list else "\n\n")
            if quoted:
                out.write("> " * quoted)
        if kind != "list_item_open" and starts_block:
            fresh_item = False
        new_list = kind in ("bullet_list_open", "ordered_list_open")
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = token.attrGet("start")
            lists.append([int(start) if start else 1] if kind == "ordered_list_open" else [0])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            counter = lists[-1] if lists else [0]
            out.write("  " * (len(lists) - 1))
            if counter[0]:
                out.write(f"{counter[0]}. ")
                counter[0] += 1
            else:
                out.write("- ")
            fresh_item = True
        elif kind == "blockquote_open":
            quoted += 1
        elif kind == "blockquote_close":
            quoted -= 1
        elif kind == "heading_open":
            out.open("BOLD")
        elif kind == "heading_close":
            out.close("BOLD")
        elif kind in ("fence", "code_block"):
            out.styled(token.content.rstrip("\n"), "MONOSPACE")
        elif kind == "hr":
            out.write("———")
        elif kind == "html_block":
            out.write(token.content.rstrip("\n"))
        elif kind == "tr_open":
            if not first_cell and not out.text().endswith("\n"):
                out.write("\n")  # a row after the first
            first_cell = True
        elif kind in ("th_open", "td_open"):
            if not first_cell:
                out.write(" | ")
            first_cell = False
        elif kind == "table_open":
            first_cell = True
        elif kind == "inline":
            _inline(out, token.children or [], link)
    return out.text().strip("\n"), out.styles


def _inline(out: _Writer, children: list[Any], link: list[tuple[str, int]]) -> None:
    for child in children:
        kind = child.type
        if kind in ("text", "html_inline"):
            out.write(child.content)
        elif kind == "text_special":  # an escape's character; an entity as written
            out.write(child.markup if child.info == "entity" else child.content)
        elif kind in ("softbreak", "hardbreak"):
            out.write("\n")
        elif kind == "code_inline":
            out.styled(child.content, "MONOSPACE")
        elif kind.endswith("_open") and kind[:-5] in _INLINE:
            out.open(_INLINE[kind[:-5]])
        elif kind.endswith("_close") and kind[:-6] in _INLINE:
            out.close(_INLINE[kind[:-6]])
        elif kind == "link_open":
            link.append((str(child.attrGet("href") or ""), len(out.parts)))
        elif kind == "link_close" and link:
            address, began = link.pop()
            shown = "".join(out.parts[began:])
            if address and address not in (shown, f"mailto:{shown}"):
                out.write(f" ({address})")
        elif kind == "image":
            out.write(child.content or str(child.attrGet("src") or ""))
