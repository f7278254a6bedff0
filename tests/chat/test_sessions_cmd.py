"""``hermes sessions``: list, show, search with highlights, export and delete."""

from __future__ import annotations

import json

import pytest

from hermes_testkit import Reply


@pytest.fixture
def two_sessions(hermes, openai_server):
    hermes.config(f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n")
    openai_server.queue(
        Reply.say("Use `os.path.join` for paths."), Reply.say("東京は日本の首都です。")
    )
    first = json.loads(hermes("chat", "-q", "how do I join paths in python?", "--json").out)
    second = json.loads(hermes("chat", "-q", "日本の首都は?", "--json").out)
    return hermes, first["session_id"], second["session_id"]


def test_list_shows_newest_first_with_what_each_is_about(two_sessions):
    hermes, first, second = two_sessions
    listed = hermes("sessions", "list")
    assert listed.code == 0
    lines = listed.out.splitlines()
    assert lines[0].startswith(second) and lines[1].startswith(first)
    assert "how do I join paths" in lines[1]
    rows = [json.loads(line) for line in hermes("sessions", "list", "--json").out.splitlines()]
    assert [row["id"] for row in rows] == [second, first]
    assert rows[1]["messages"] == 2


def test_search_finds_words_code_and_cjk_with_highlights(two_sessions):
    hermes, first, second = two_sessions
    words = hermes("sessions", "search", "paths")
    assert first in words.out and "[paths]" in words.out
    code = hermes("sessions", "search", "os.path.join")
    assert first in code.out and "[os.path.join]" in code.out
    cjk = hermes("sessions", "search", "首都")
    assert second in cjk.out and first not in cjk.out
    assert "Nothing matches" in hermes("sessions", "search", "zebra").out


def test_export_jsonl_has_one_message_a_line_and_markdown_reads_well(two_sessions, tmp_path):
    hermes, first, _ = two_sessions
    exported = hermes("sessions", "export", first)
    rows = [json.loads(line) for line in exported.out.splitlines()]
    assert [(row["seq"], row["role"]) for row in rows] == [(1, "user"), (2, "assistant")]
    target = tmp_path / "out.md"
    assert hermes("sessions", "export", first, "--format", "md", "-o", str(target)).code == 0
    markdown = target.read_text()
    assert "## user\n\nhow do I join paths in python?" in markdown
    assert "Use `os.path.join` for paths." in markdown


def test_delete_removes_the_session_and_search_forgets_it(two_sessions):
    hermes, first, second = two_sessions
    assert hermes("sessions", "delete", first, "--yes").code == 0
    assert first not in hermes("sessions", "list").out
    assert first not in hermes("sessions", "search", "paths").out
    missing = hermes("sessions", "show", first)
    assert missing.code == 1 and "no session" in missing.err
    shown = hermes("sessions", "show", "2")  # one session left: any prefix is unique now
    assert shown.code == 0 and second in shown.out


def test_an_empty_store_says_how_to_start(hermes):
    assert "No sessions yet" in hermes("sessions", "list").out


def test_an_ambiguous_prefix_asks_for_more(two_sessions):
    hermes, _first, _second = two_sessions
    result = hermes("sessions", "show", "2")
    assert result.code == 1 and "matches more than one session" in result.err


def test_terminal_escapes_in_stored_text_are_shown_not_obeyed(hermes, openai_server):
    hermes.config(f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n")
    openai_server.queue(Reply.say("title \x1b]0;pwned\x07 and \x1b[2J clear"))
    session = json.loads(hermes("chat", "-q", "hi", "--json").out)["session_id"]
    shown = hermes("sessions", "show", session).out
    assert "\x1b" not in shown and "␛]0;pwned" in shown


def test_export_to_an_unwritable_place_is_one_line(two_sessions, tmp_path):
    hermes, first, _ = two_sessions
    result = hermes("sessions", "export", first, "-o", str(tmp_path / "no" / "such" / "x.md"))
    assert result.code == 1 and "cannot write" in result.err and "Traceback" not in result.err
