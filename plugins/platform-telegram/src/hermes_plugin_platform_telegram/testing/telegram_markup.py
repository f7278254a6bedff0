"""How the fake Bot API reads message text the way Telegram does: the text a user sees once
HTML or MarkdownV2 is parsed (the 4,096-character limit counts that), and the "can't parse
entities" errors for markup Telegram refuses."""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["ParseError", "visible_text"]

_HTML_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
    "code", "pre", "blockquote", "tg-emoji",
}  # fmt: skip
_HTML_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_MARKDOWN_RESERVED = set("_*[]()~`>#+-=|{}.!")


class ParseError(ValueError):
    """Telegram's "can't parse entities" (the message says why)."""


class _TelegramHTML(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.parts: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HTML_TAGS:
            raise ParseError(f'Unsupported start tag "{tag}"')
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            raise ParseError(f'Unmatched end tag "{tag}"')
        self.open.pop()

    def handle_data(self, data: str) -> None:
        if "<" in data or "&" in data:
            raise ParseError("Unexpected character; < and & must be escaped")
        self.parts.append(data)

    def handle_entityref(self, name: str) -> None:
        if name not in _HTML_ENTITIES:
            raise ParseError(f'Unsupported HTML entity "&{name};"')
        self.parts.append(_HTML_ENTITIES[name])

    def handle_charref(self, name: str) -> None:
        code = int(name[1:], 16) if name[:1] in "xX" else int(name)
        self.parts.append(chr(code))


def _visible_html(text: str) -> str:
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.open:
        raise ParseError(f'Can\'t find end tag corresponding to start tag "{parser.open[-1]}"')
    if parser.rawdata:  # an unfinished tag such as "<b"
        raise ParseError("Unclosed start tag")
    return "".join(parser.parts)


def _visible_markdown_v2(text: str) -> str:
    parts: list[str] = []
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            parts.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "*_~`|":
            continue  # formatting markers (balance is not checked here)
        elif char in _MARKDOWN_RESERVED:
            raise ParseError(
                f"Character '{char}' is reserved and must be escaped with the preceding '\\' "
                f"(at offset {index})"
            )
        else:
            parts.append(char)
    return "".join(parts)


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text Telegram shows for ``text`` sent with ``parse_mode``; raises ParseError."""
    mode = (parse_mode or "").lower()
    if mode == "html":
        return _visible_html(text)
    if mode == "markdownv2":
        return _visible_markdown_v2(text)
    return text
