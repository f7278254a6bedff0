"""Search on PostgreSQL, with the same modes and results as on SQLite: words through the
stored ``tsvector`` (the newest ``rank_window`` matches ranked), substrings through
``pg_trgm`` (newest first). User text is always a bound parameter: ``plainto_tsquery`` takes
any words, and a substring's ``%``, ``_`` and ``\\`` are escaped, so no input is syntax.
Rows are ``(id, session_id, role, created_at, content)``; the caller makes the snippets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_sdk.store_engine import Database as StoreBackend
from hermes_sdk.store_engine import MessageRow

_COLUMNS = "m.id, m.session_id, m.role, m.created_at, m.content"

RANK_WINDOW = 250
"""How many of the newest matches are ranked. A GIN index cannot hand its matches over
newest first, as FTS5's doclists do, so the newest N matches of a common pair of words cost
reading rows until N are found: with 1,000, a word search at 1M messages took 44 ms at p95;
with 250, 12 ms (tests/bench/search_postgres.py). Fewer than 250 matches are all ranked, as
on SQLite."""


def _rows(rows: list[tuple[Any, ...]]) -> list[MessageRow]:
    return [(row[0], row[1], row[2], row[3], row[4]) for row in rows]


def word_rows(
    db: StoreBackend,
    terms: Sequence[str],
    scope: str,
    scope_binding: Sequence[Any],
    limit: int,
    rank_window: int | None = None,
) -> list[MessageRow]:
    window = RANK_WINDOW if rank_window is None else rank_window
    words = " ".join(terms)
    return _rows(
        db.query(
            f"SELECT id, session_id, role, created_at, content FROM ("
            f"  SELECT {_COLUMNS}, m.words FROM messages m"
            f"  WHERE m.words @@ plainto_tsquery('simple', hermes_fold(?)) {scope}"
            f"  ORDER BY m.id DESC LIMIT {int(window)}"
            f") AS hits ORDER BY ts_rank_cd(words, plainto_tsquery('simple', hermes_fold(?))) "
            "DESC, id DESC LIMIT ?",
            [words, *scope_binding, words, limit],
        )
    )


RECENT_ROWS = 2_000
"""A substring search first looks at this many of the newest messages alone."""


def substring_rows(
    db: StoreBackend, text: str, scope: str, scope_binding: Sequence[Any], limit: int
) -> list[MessageRow]:
    """The newest ``limit`` messages holding ``text``.

    PostgreSQL cannot tell how common a substring is (it guesses a hundred rows), so it
    reads every match from the trigram index and sorts them: a substring in 2% of a million
    messages cost 70 ms. So the newest :data:`RECENT_ROWS` messages are searched first, by
    a bounded scan (a few milliseconds, and enough for a substring in 1% of them or more); only when
    they hold fewer than ``limit`` matches is the index asked, and then the matches are few.
    """
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    match, needle = (
        ("m.folded LIKE '%' || hermes_fold(?) || '%'", escaped)
        if len(text) >= 3
        else ("strpos(m.folded, hermes_fold(?)) > 0", text)  # trigrams need three characters
    )
    recent = db.query(
        f"WITH recent AS MATERIALIZED (SELECT id, folded FROM messages "
        f"ORDER BY id DESC LIMIT {RECENT_ROWS}), "
        f"hits AS MATERIALIZED (SELECT m.id FROM recent m WHERE {match}) "
        f"SELECT {_COLUMNS} FROM messages m JOIN hits ON hits.id = m.id WHERE true {scope} "
        "ORDER BY m.id DESC LIMIT ?",
        [needle, *scope_binding, limit],
    )
    if len(recent) >= limit:
        return _rows(recent)
    # The trigram index answers LIKE over the folded text it was built from.
    return _rows(
        db.query(
            f"SELECT {_COLUMNS} FROM messages m WHERE {match} {scope} ORDER BY m.id DESC LIMIT ?",
            [needle, *scope_binding, limit],
        )
    )
