"""split_message: chunks within the limit, cut at paragraphs, code blocks kept renderable."""

from __future__ import annotations

import pytest

from hermes_sdk.platform import split_message


def test_short_text_is_one_chunk():
    assert split_message("hello", 100) == ["hello"]


def test_cuts_at_paragraphs_first():
    text = "a" * 40 + "\n\n" + "b" * 40 + "\n\n" + "c" * 40
    assert split_message(text, 90) == ["a" * 40 + "\n\n" + "b" * 40, "c" * 40]


def test_falls_back_to_lines_words_and_hard_cuts():
    assert split_message("x" * 50 + "\n" + "y" * 50, 60) == ["x" * 50, "y" * 50]
    assert split_message("word " * 30, 40)[0].endswith("word")
    chunks = split_message("z" * 100, 30)
    assert all(len(c) <= 30 for c in chunks) and "".join(chunks) == "z" * 100


def test_a_code_block_cut_in_two_is_closed_and_reopened():
    code = "\n".join(f"line {i}" for i in range(40))
    chunks = split_message(f"intro\n\n```python\n{code}\n```\n\nafter", 120)
    assert len(chunks) > 2
    assert all(len(c) <= 120 for c in chunks)
    for chunk in chunks:
        assert chunk.count("```") % 2 == 0, chunk  # every chunk renders on its own
    assert chunks[1].startswith("```python")
    body = "".join(chunks)
    assert all(f"line {i}" in body for i in range(40))


@pytest.mark.parametrize("limit", [16, 50, 4096])
def test_nothing_is_lost(limit):
    text = "\n\n".join(f"paragraph {i} " + "text " * (i * 7) for i in range(30))
    chunks = split_message(text, limit)
    assert all(len(c) <= limit for c in chunks)
    assert "".join(chunks).split() == text.split() or "".join("".join(chunks).split()) == "".join(
        text.split()
    )


def test_a_tiny_limit_is_refused():
    with pytest.raises(ValueError):
        split_message("x", 8)
