"""Reading hermes-agent's state.db across its schema versions: an old one without the
columns 0.19 has, compaction and rewind, multimodal content, odd roles and broken files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hermes_plugin_import_hermes_agent.history import (
    HistoryStats,
    HistoryUnreadable,
    history_batches,
)

from hermes_commons.sqlite_copy import readable_copy


def read_history(connection):
    """Every session, with what was left out; batches of 2, to cross batch edges."""
    stats = HistoryStats()
    sessions = [s for batch in history_batches(connection, stats, size=2) for s in batch]
    return sessions, stats


OLD_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (4);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, parent_session_id TEXT,
    started_at REAL NOT NULL, ended_at REAL, message_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL
);
"""


def old_database(path: Path) -> Path:
    """A state.db as early hermes-agent versions wrote it: no title, user, cost, active or
    compacted columns."""
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO sessions VALUES ('s1', 'telegram', 'm', NULL, 10, 20, 3, 5, 6)")
        db.execute("INSERT INTO sessions VALUES ('s2', 'subagent', 'm', 's1', 11, NULL, 1, 0, 0)")
        db.execute("INSERT INTO sessions VALUES ('s3', 'cli', 'm', 'gone', 12, NULL, 0, 0, 0)")
        calls = json.dumps([{"name": "terminal", "arguments": {"command": "ls"}}])
        db.executemany(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, "
            "tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                ("s1", "user", "list the files", None, None, None, 10.1),
                ("s1", "assistant", "", None, calls, None, 10.2),
                ("s1", "tool", "a.txt", "imported_0", None, "terminal", 10.3),
                ("s2", "user", "the goal", None, None, None, 11.1),
            ],
        )
    return path


def test_an_old_schema_reads_with_what_it_has(tmp_path):
    with readable_copy(old_database(tmp_path / "state.db")) as connection:
        sessions, stats = read_history(connection)
    first, child, orphan = sessions
    assert stats.schema_version == 4 and len(sessions) == 3
    assert sum(len(session.messages) for session in sessions) == 4
    assert first.source == "telegram" and first.user_scope is None  # no user_id column
    assert first.title is None and first.cost_usd is None  # unknown, not free
    assert (first.input_tokens, first.output_tokens) == (5, 6)
    assert [m.role for m in first.messages] == ["user", "assistant", "tool"]
    (call,) = first.messages[1].tool_calls
    assert (call.name, json.loads(call.arguments)) == ("terminal", {"command": "ls"})
    assert call.id == first.messages[2].tool_call_id  # a call without an id gets a stable one
    assert child.source == "delegate" and child.parent_session_id == "s1"
    assert orphan.parent_session_id is None and stats.orphan_parents == 1


def with_v22_rows(path: Path) -> Path:
    """The shape 0.19 writes (columns added by hand): compaction, rewind, images, roles."""
    old_database(path)
    with sqlite3.connect(path) as db:
        for column in ("active INTEGER NOT NULL DEFAULT 1", "compacted INTEGER NOT NULL DEFAULT 0",
                       "reasoning TEXT", "finish_reason TEXT"):  # fmt: skip
            db.execute(f"ALTER TABLE messages ADD COLUMN {column}")
        db.execute("ALTER TABLE sessions ADD COLUMN user_id TEXT")
        db.execute("ALTER TABLE sessions ADD COLUMN title TEXT")
        db.execute("ALTER TABLE sessions ADD COLUMN actual_cost_usd REAL")
        db.execute("UPDATE sessions SET user_id = '42', title = 'Files', actual_cost_usd = 0.25 "
                   "WHERE id = 's1'")  # fmt: skip
        image = "\x00json:" + json.dumps(
            [{"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {}}]
        )
        rows = [
            ("s1", "user", "old question", 0, 1, 9.0),  # compacted away, still history
            ("s1", "assistant", "old answer", 0, 1, 9.5),
            ("s1", "user", "taken back", 0, 0, 10.4),  # rewound
            ("s1", "session_meta", "{}", 1, 0, 10.5),
            ("s1", "user", image, 1, 0, 10.6),
        ]
        db.executemany(
            "INSERT INTO messages (session_id, role, content, active, compacted, timestamp) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    return path


def test_compacted_rewound_and_multimodal_messages(tmp_path):
    with readable_copy(with_v22_rows(tmp_path / "state.db")) as connection:
        (first, *_), stats = read_history(connection)
    contents = [m.content for m in first.messages]
    assert contents[:2] == ["old question", "old answer"]  # compacted rows come first
    assert first.view_starts_at == 2  # ... and the view on resume starts after them
    assert "taken back" not in contents and stats.rewound == 1
    assert stats.odd_roles == {"session_meta": 1}
    assert contents[-1] == "what is this?\n[an image was attached here]" and stats.images == 1
    assert first.user_scope == "telegram:42" and first.title == "Files"
    assert first.cost_usd == 0.25


def test_the_database_is_read_from_a_copy(tmp_path):
    source = old_database(tmp_path / "state.db")
    before = sorted(p.name for p in tmp_path.iterdir())
    with readable_copy(source) as connection:
        read_history(connection)
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # no -wal, -shm, journal
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("content", "problem"),
    [(b"this is not sqlite at all" * 10, "not a readable SQLite database"),
     (None, "cannot read")],
)  # fmt: skip
def test_a_broken_state_db_is_one_line(tmp_path, content, problem):
    path = tmp_path / "state.db"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(HistoryUnreadable, match=problem), readable_copy(path) as connection:
        read_history(connection)


def test_a_database_without_sessions_is_not_hermes_agents(tmp_path):
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE other (x)")
    with pytest.raises(HistoryUnreadable, match="no sessions table"), readable_copy(path) as db:
        read_history(db)
