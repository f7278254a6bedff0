"""Versioned migrations of state.db. Each entry moves the schema up by one version; the
version lives in ``PRAGMA user_version``. Never edit a released migration: add one."""

from __future__ import annotations

V1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    model TEXT,
    provider TEXT,
    system_prompt TEXT,
    parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    title TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    tool_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL NOT NULL DEFAULT 0,
    cwd TEXT,
    git_root TEXT
);
CREATE INDEX sessions_started ON sessions(started_at);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    tool_name TEXT,
    finish_reason TEXT,
    reasoning TEXT,
    disposition TEXT,
    created_at REAL NOT NULL,
    updated_at REAL,
    UNIQUE (session_id, seq)
);
CREATE INDEX messages_tool_call ON messages(session_id, tool_call_id);

-- Two full-text indexes over message text: words (unicode61, diacritics folded) for
-- ranked search, and trigrams for CJK, code and substring search. External content:
-- the text is stored once, in messages; triggers keep both indexes in step.
CREATE VIRTUAL TABLE messages_words USING fts5(
    content, content='messages', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE messages_trigrams USING fts5(
    content, content='messages', content_rowid='id',
    tokenize='trigram case_sensitive 0 remove_diacritics 1'
);
CREATE TRIGGER messages_index_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_words(rowid, content) VALUES (new.id, coalesce(new.content, ''));
    INSERT INTO messages_trigrams(rowid, content) VALUES (new.id, coalesce(new.content, ''));
END;
CREATE TRIGGER messages_index_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_words(messages_words, rowid, content)
        VALUES ('delete', old.id, coalesce(old.content, ''));
    INSERT INTO messages_trigrams(messages_trigrams, rowid, content)
        VALUES ('delete', old.id, coalesce(old.content, ''));
END;
CREATE TRIGGER messages_index_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_words(messages_words, rowid, content)
        VALUES ('delete', old.id, coalesce(old.content, ''));
    INSERT INTO messages_trigrams(messages_trigrams, rowid, content)
        VALUES ('delete', old.id, coalesce(old.content, ''));
    INSERT INTO messages_words(rowid, content) VALUES (new.id, coalesce(new.content, ''));
    INSERT INTO messages_trigrams(rowid, content) VALUES (new.id, coalesce(new.content, ''));
END;

CREATE TABLE turn_leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    holder TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""

V2 = """
-- Index message text in batches, off the turn's critical path: FTS5 insertion cost two
-- thirds of every append. Rows with id <= indexed_upto are in both indexes; newer rows are
-- added by index_pending() before every search and at the end of every turn.
DROP TRIGGER messages_index_insert;
CREATE TABLE fts_progress (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_upto INTEGER NOT NULL
);
INSERT INTO fts_progress (id, indexed_upto) VALUES (1, (SELECT coalesce(max(id), 0) FROM messages));
DROP TRIGGER messages_index_delete;
DROP TRIGGER messages_index_update;
-- One trigger, statements in order: remove an indexed row from both indexes, then make sure
-- a reused rowid (SQLite reuses the largest one once it is deleted) counts as not indexed.
CREATE TRIGGER messages_index_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_words(messages_words, rowid, content)
        SELECT 'delete', old.id, coalesce(old.content, '')
        WHERE old.id <= (SELECT indexed_upto FROM fts_progress);
    INSERT INTO messages_trigrams(messages_trigrams, rowid, content)
        SELECT 'delete', old.id, coalesce(old.content, '')
        WHERE old.id <= (SELECT indexed_upto FROM fts_progress);
    UPDATE fts_progress
        SET indexed_upto = min(indexed_upto, (SELECT coalesce(max(id), 0) FROM messages));
END;
CREATE TRIGGER messages_index_update AFTER UPDATE OF content ON messages
WHEN old.id <= (SELECT indexed_upto FROM fts_progress) BEGIN
    INSERT INTO messages_words(messages_words, rowid, content)
        VALUES ('delete', old.id, coalesce(old.content, ''));
    INSERT INTO messages_trigrams(messages_trigrams, rowid, content)
        VALUES ('delete', old.id, coalesce(old.content, ''));
    INSERT INTO messages_words(rowid, content) VALUES (new.id, coalesce(new.content, ''));
    INSERT INTO messages_trigrams(rowid, content) VALUES (new.id, coalesce(new.content, ''));
END;
"""

V3 = """
-- Usage per model call (sessions keep the totals), and what a call's price was unknown for:
-- an unknown price is shown as unknown, never as free.
CREATE TABLE model_calls (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
    provider TEXT,
    model TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    created_at REAL NOT NULL
);
CREATE INDEX model_calls_by_session ON model_calls(session_id);
ALTER TABLE sessions ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;
-- Sessions from before prices were known: their cost is unknown, not zero.
UPDATE sessions SET unpriced_calls = 1 WHERE input_tokens + output_tokens > 0;
-- Provider blocks (such as signed thinking blocks) to send back with an assistant message.
ALTER TABLE messages ADD COLUMN reasoning_details TEXT;
"""

V4 = """
-- Whose session it is, for what is kept per person (a chat platform's user): "PLATFORM:42".
-- NULL is the owner at the terminal. A routing and scoping key, never a credential.
ALTER TABLE sessions ADD COLUMN user_scope TEXT;
CREATE INDEX sessions_by_scope ON sessions(user_scope) WHERE user_scope IS NOT NULL;
"""

V5 = """
-- Version 5 made tables that a plugin owns now: a plugin's tables are its own (see
-- plugin_schemas, version 7). Homes made before keep them, and their plugin goes on using
-- them; a new home gets them from the plugin's own migrations.
SELECT 1;
"""

V6 = """
-- Compaction: the summary that stands for a session's messages up to boundary_seq in the
-- view sent to the model. The messages themselves stay (search and export see them all);
-- the newest row is the view a turn continues from, so a restart does not compact again.
-- actions: JSON, the side-effecting tool calls the summary stands for, with the head of
-- their output, carried forward by every later compaction (the newest that fit; the
-- number of older ones is actions_left_out).
CREATE TABLE compactions (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    boundary_seq INTEGER NOT NULL,
    summary TEXT NOT NULL,
    actions TEXT NOT NULL DEFAULT '[]',
    actions_left_out INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL,
    engine TEXT NOT NULL,
    by_model INTEGER NOT NULL,
    messages_replaced INTEGER NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX compactions_by_session ON compactions(session_id, id);
"""

V7 = """
-- Plugins' own tables (hermes_sdk.storage): the version of each plugin's schema, by name.
CREATE TABLE plugin_schemas (
    name TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
"""

V8 = """
-- Files sent with a message (hermes_sdk.media): JSON, one object per attachment with its
-- kind, sniffed type, size, cached path and name, and the text that stands for it (a
-- transcript, a document's text, an image's description), so that text outlives the file.
ALTER TABLE messages ADD COLUMN attachments TEXT;
"""

V9 = """
-- Tool calls a running tool made (hermes_sdk.tooling.ToolCaller: a script's calls), each a
-- child of the call it ran inside: message_id is the assistant message holding that call,
-- parent_call_id its id there. A row is written before the call runs; disposition stays
-- NULL until it ends, so a row without one after a crash is a call whose effect is unknown.
CREATE TABLE nested_calls (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    parent_call_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    tool_name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    content TEXT,
    disposition TEXT,
    seconds REAL,
    created_at REAL NOT NULL
);
CREATE INDEX nested_calls_by_parent ON nested_calls(message_id, parent_call_id, position);
CREATE INDEX nested_calls_by_session ON nested_calls(session_id);
"""

V10 = """
-- Turn leases are the leases named turn:SESSION in the one leases table every process that
-- owns something shares (hermes_commons.leases.LEASES, made as the store opens).
DROP TABLE turn_leases;
"""

MIGRATIONS: tuple[str, ...] = (V1, V2, V3, V4, V5, V6, V7, V8, V9, V10)
"""MIGRATIONS[n] upgrades a database at version n to version n + 1."""
