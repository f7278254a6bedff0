"""Full-text search in state.db: two FTS5 indexes over the text of messages, words
(unicode61, diacritics folded) ranked by bm25, and trigrams for CJK, code and substrings.
Messages are indexed in batches, off a turn's critical path (:func:`index_pending`). User
text never reaches FTS5's query syntax unquoted, so no input can cause a syntax error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_sdk.store_engine import Database, MessageRow

RANK_WINDOW = 1_000
"""How many of the newest matches are ranked by relevance: bm25 over every match of a
common word in a million messages costs hundreds of milliseconds, while a descending rowid
scan stops early. Recent history is what a personal agent is usually asked about."""

_COLUMNS = "m.id, m.session_id, m.role, m.created_at, m.content"


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def index_pending(db: Database) -> int:
    """Index every message not indexed yet; return how many. Cheap when there are none."""
    with db.write() as cursor:
        rows = cursor.execute("SELECT indexed_upto FROM fts_progress WHERE id = 1").fetchall()
        upto = int(rows[0][0] or 0) if rows else 0
        newest = int(
            cursor.execute("SELECT coalesce(max(id), 0) FROM messages").fetchall()[0][0] or 0
        )
        if newest <= upto:
            return 0
        added = 0
        for table in ("messages_words", "messages_trigrams"):
            cursor.execute(
                f"INSERT INTO {table}(rowid, content) SELECT id, coalesce(content, '') "
                "FROM messages WHERE id > ? AND id <= ? ORDER BY id",
                (upto, newest),
            )
            added = int(cursor.changes())
        cursor.execute("UPDATE fts_progress SET indexed_upto = ? WHERE id = 1", (newest,))
        return added


def find_words(
    db: Database, terms: Sequence[str], scope: str, bindings: Sequence[Any], limit: int
) -> list[MessageRow]:
    """The newest RANK_WINDOW matches, best (bm25) first."""
    match = " ".join(_quote(term) for term in terms)
    rows = db.query(
        f"SELECT id, session_id, role, created_at, content FROM ("
        f"  SELECT {_COLUMNS}, messages_words.rank AS score"
        f"  FROM messages_words JOIN messages m ON m.id = messages_words.rowid"
        f"  WHERE messages_words MATCH ? {scope} ORDER BY messages_words.rowid DESC"
        f"  LIMIT {RANK_WINDOW}"
        f") ORDER BY score LIMIT ?",
        [match, *bindings, limit],
    )
    return [(row[0], row[1], row[2], row[3], row[4]) for row in rows]


def find_substrings(
    db: Database, text: str, scope: str, bindings: Sequence[Any], limit: int
) -> list[MessageRow]:
    """Newest first: a substring either occurs or not, and the scan stops at ``limit``."""
    if len(text) < 3:  # trigrams need three characters: a plain (slower) scan
        rows = db.query(
            f"SELECT {_COLUMNS} FROM messages m WHERE instr(lower(m.content), lower(?)) > 0 "
            f"{scope} ORDER BY m.id DESC LIMIT ?",
            [text, *bindings, limit],
        )
    else:
        rows = db.query(
            f"SELECT {_COLUMNS} FROM messages_trigrams"
            f" JOIN messages m ON m.id = messages_trigrams.rowid"
            f" WHERE messages_trigrams MATCH ? {scope}"
            f" ORDER BY messages_trigrams.rowid DESC LIMIT ?",
            [_quote(text), *bindings, limit],
        )
    return [(row[0], row[1], row[2], row[3], row[4]) for row in rows]
