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
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass
class _Writer:
    parts: list[str] = field(default_factory=list)
    position: int = 0
    quoted: int = 0
    """Blockquotes open: each new line inside starts with "> " as many times."""
    styles: list[str] = field(default_factory=list)
    opened: dict[str, list[int]] = field(default_factory=dict)

    def write(self, text: str) -> None:
        if self.quoted and "\n" in text:
            text = text.replace("\n", "\n" + "> " * self.quoted)
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
    lists: list[list[int | None]] = []  # per open list: [next number] (None: bullets)
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
                quoted, out.quoted = out.quoted, 0  # the break itself: no prefix yet
                out.write("\n" if tight and not first_of_top_list else "\n\n")
                out.quoted = quoted
            if out.quoted:
                out.write("> " * out.quoted)
        if kind != "list_item_open" and starts_block:
            fresh_item = False
        new_list = kind in ("bullet_list_open", "ordered_list_open")
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = token.attrGet("start")
            ordered = kind == "ordered_list_open"
            lists.append([int(start) if start is not None else 1] if ordered else [None])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            counter: list[int | None] = lists[-1] if lists else [None]
            out.write("  " * (len(lists) - 1))
            number = counter[0]
            if number is not None:
                out.write(f"{number}. ")
                counter[0] = number + 1
            else:
                out.write("- ")
            fresh_item = True
        elif kind == "blockquote_open":
            out.quoted += 1
        elif kind == "blockquote_close":
            out.quoted -= 1
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
    text = out.text()
    lead = len(text) - len(text.lstrip("\n"))  # a block that wrote nothing, then a break
    text = text.strip("\n")
    shifted = [_shifted(style, lead, _units(text)) for style in out.styles]
    return text, [style for style in shifted if style]


def _shifted(style: str, by: int, total: int) -> str:
    """A range moved back over ``by`` leading newlines (one unit each), kept within the
    ``total`` units of the stripped text; '' when nothing of it is left."""
    start, length, name = style.split(":")
    begin = max(int(start) - by, 0)
    end = min(int(start) + int(length) - by, total)
    return f"{begin}:{end - begin}:{name}" if end > begin else ""


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
            if address and not shown.strip():
                out.write(address)  # a link with no text: its address is the text
            elif address and address not in (shown, f"mailto:{shown}"):
                out.write(f" ({address})")
        elif kind == "image":
            out.write(child.content or str(child.attrGet("src") or ""))
