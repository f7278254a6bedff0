"""The todo list: kept per session in HERMES_HOME, so it survives a restart."""

from __future__ import annotations

import pytest
from hermes_plugin_toolset_planning import todo

from hermes_sdk.tooling import ToolContext


def context(home, session_id="20261130_071300_3f9a1c"):
    return ToolContext(session_id=session_id, home=str(home), cwd=str(home))


def test_the_list_survives_a_restart_and_merges_by_id(tmp_path):
    first = todo(context(tmp_path), [{"content": "sort files"}, {"content": "write notes"}])
    assert first.splitlines() == ["0/2 done", "[ ] 1. sort files", "[ ] 2. write notes"]
    # A new process reads the same file: nothing of the list is kept in memory.
    merged = todo(context(tmp_path), [{"id": "1", "status": "completed"}], merge=True)
    assert merged.splitlines()[:2] == ["1/2 done", "[x] 1. sort files"]
    assert todo(context(tmp_path)) == merged
    assert todo(context(tmp_path, "20261130_071300_other")) == "the todo list is empty"


def test_a_damaged_list_is_kept_aside_and_said(tmp_path):
    saved = tmp_path / "todo" / "20261130_071300_3f9a1c.json"
    saved.parent.mkdir()
    saved.write_text("{not json")
    text = todo(context(tmp_path))
    assert "could not be read" in text and text.endswith("the todo list is empty")
    assert saved.with_suffix(".damaged").read_text() == "{not json"  # nothing is lost


def test_bad_items_and_odd_session_ids_are_refused(tmp_path):
    with pytest.raises(ValueError, match="status must be one of"):
        todo(context(tmp_path), [{"content": "x", "status": "done"}])
    with pytest.raises(ValueError, match="no todo list"):
        todo(context(tmp_path, "../escape"))
    assert not (tmp_path / "todo").exists() or not any((tmp_path / "todo").iterdir())
