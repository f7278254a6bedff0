"""What ``hermes sessions`` prints, from the SDK's records: stored text never drives the
terminal, absent fields stay out of an export, and a list line says what a session is about."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import Any

from hermes_plugin_sessions.render import (
    compaction_mark,
    details,
    list_line,
    message_json,
    search_line,
    transcript_lines,
    write_export,
)

from hermes_sdk.runtime import CompactionMark, SessionMessage, SessionSummary

BASE = SessionSummary(
    session_id="20260101_120000_abcdef",
    source="cli",
    title=None,
    model="test-model",
    provider="openai",
    cwd=None,
    user_scope=None,
    parent_session_id=None,
    started_at=1_767_268_800.0,
    ended_at=None,
    message_count=2,
    input_tokens=1200,
    output_tokens=34,
    estimated_cost_usd=0.0123,
)


def summary(**fields: Any) -> SessionSummary:
    return replace(BASE, **fields)


def test_a_list_line_says_what_an_untitled_session_is_about() -> None:
    untitled = list_line(summary(), "how do I join\npaths in python? " + "x" * 80)
    assert untitled.startswith("20260101_120000_abcdef  ")
    assert "   2 msgs   $0.0123  test-model  how do I join paths in python? xxx" in untitled
    assert untitled.endswith("…") and len(untitled.rpartition("test-model  ")[2]) == 50
    assert list_line(summary(title="Paths"), "ignored").endswith("test-model  Paths")
    assert list_line(summary(model=None), "").endswith("-  (empty)")


def test_details_list_the_children_by_source_and_the_compactions() -> None:
    child = summary(session_id="child1", source="delegate", title="count files", input_tokens=5)
    ended = summary(ended_at=1_767_272_400.0, end_reason="cli_exit", cwd="/work")
    lines = list(details(ended, "budget: 1,234 of 40,000 tokens (3%)", [child], 2))
    assert lines[1] == "  source: cli; model: openai / test-model"
    assert lines[2].endswith("(cli_exit)") and lines[3] == "  directory: /work"
    assert "  budget: 1,234 of 40,000 tokens (3%)" in lines
    assert any(line.startswith("  delegate child1: count files; 5 in") for line in lines)
    assert lines[-1].startswith("  compacted 2 time(s)")
    assert not any("compacted" in line for line in details(summary(), None, [], 0))


def test_stored_escapes_are_shown_not_obeyed() -> None:
    reply = SessionMessage(seq=2, role="assistant", content="title \x1b]0;pwned\x07", created_at=0)
    (line,) = transcript_lines(reply)
    assert "\x1b" not in line and "␛]0;pwned" in line
    hit = search_line("s1", 0.0, "user", "a [match] \x1b[2J", color=False)
    assert "\x1b" not in hit and "[match]" in hit
    assert "\x1b[1;33mmatch\x1b[0m" in search_line("s1", 0.0, "user", "a [match]", color=True)


def test_tool_calls_in_either_stored_shape_are_shown() -> None:
    calls = (
        {"id": "c1", "name": "terminal", "arguments": '{"command": "ls"}'},
        {"id": "c2", "function": {"name": "read_file", "arguments": "{}"}},
    )
    asked = SessionMessage(
        seq=3,
        role="assistant",
        content=None,
        created_at=0,
        tool_calls=calls,
        finish_reason="interrupted",
    )
    assert list(transcript_lines(asked)) == [
        'assistant (interrupted) calls terminal({"command": "ls"})',
        "assistant (interrupted) calls read_file({})",
    ]
    result = SessionMessage(
        seq=4,
        role="tool",
        content="a\nb",
        created_at=0,
        tool_name="terminal",
        disposition="unknown",
    )
    assert list(transcript_lines(result)) == ["[tool terminal · unknown] a b"]


def test_an_export_leaves_out_what_a_message_lacks() -> None:
    plain = SessionMessage(seq=1, role="user", content="hi", created_at=5.0)
    assert message_json(plain) == {"seq": 1, "role": "user", "content": "hi", "created_at": 5.0}
    thought = SessionMessage(seq=2, role="assistant", content="ok", created_at=6.0, reasoning="r")
    out = io.StringIO()
    write_export(out, "jsonl", summary(), [plain, thought])
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[1]["reasoning"] == "r" and "tool_calls" not in rows[1]
    markdown = io.StringIO()
    write_export(markdown, "md", summary(title="Hello"), [plain, thought])
    assert markdown.getvalue().startswith("# Hello\n\n- id: `20260101_120000_abcdef`\n")
    assert "## user\n\nhi\n\n## assistant\n\nok\n\n" in markdown.getvalue()


def test_a_compaction_mark_says_how_much_it_saved() -> None:
    mark = CompactionMark(
        boundary_seq=10,
        created_at=0.0,
        reason="threshold",
        engine="summary",
        by_model=False,
        messages_replaced=9,
        tokens_before=12_000,
        tokens_after=900,
    )
    text = compaction_mark(mark)
    assert text.startswith("── compacted here, ") and "(threshold)" in text
    assert "9 messages up to this point summarized without a model" in text
    assert "about 12,000 -> 900 tokens ──" in text
