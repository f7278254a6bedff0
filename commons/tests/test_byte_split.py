"""Replies cut by bytes: within the limit, in order, never inside a character or a
grapheme, at sentence ends where there are some."""

from __future__ import annotations

import pytest

from hermes_commons.byte_split import split_utf8


def test_a_chinese_reply_is_cut_at_sentence_ends_within_the_bytes() -> None:
    text = "这是第一句话，说明问题。" * 250 + "最后一句。"
    pieces = split_utf8(text, 2048)
    assert all(len(p.encode()) <= 2048 for p in pieces)
    assert "".join(pieces) == text
    assert all(p.endswith("。") for p in pieces)


@pytest.mark.parametrize(
    "unit",
    ["👍🏽", "👨‍👩‍👧", "🇨🇳", "é", "1️⃣", "汉", "का", "กำ", "\u1100\u1161\u11a8"],
)
def test_no_grapheme_is_cut_even_without_a_place_to_break(unit: str) -> None:
    text = unit * 1000
    pieces = split_utf8(text, 100)
    assert all(len(p.encode()) <= 100 for p in pieces)
    assert "".join(pieces) == text
    assert all(len(p) % len(unit) == 0 for p in pieces)


def test_latin_text_breaks_at_spaces_and_short_text_is_whole() -> None:
    assert split_utf8("hello world", 2048) == ["hello world"]
    pieces = split_utf8("word " * 1000, 200)
    assert all(not p.startswith(" ") and len(p.encode()) <= 200 for p in pieces)
    assert " ".join(pieces) == ("word " * 1000).strip()


def test_indents_and_crlf_survive_and_blank_pieces_are_dropped() -> None:
    code = "\r\n".join(f"    line_{n} = {n}" for n in range(200))
    pieces = split_utf8(code, 300)
    assert all(p.startswith("    line_") for p in pieces)
    assert all("\r" not in p for p in pieces)
    assert split_utf8("\t\u3000 \n", 100) == []
