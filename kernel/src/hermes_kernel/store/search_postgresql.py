"""Search on PostgreSQL, with the same modes and results as on SQLite: words through the
stored ``tsvector`` (the newest ``rank_window`` matches ranked), substrings through
``pg_trgm`` (newest first). User text is always a bound parameter: ``plainto_tsquery`` takes
any words, and a substring's ``%``, ``_`` and ``\\`` are escaped, so no input is syntax.
Rows are ``(id, session_id, role, created_at, content)``; the caller makes the snippets."""

from __future__ import annotations

from typing import Any

from hermes_kernel.store.backend import StoreBackend

_COLUMNS = "m.id, m.session_id, m.role, m.created_at, m.content"


def word_rows(
    db: StoreBackend,
    terms: list[str],
    scope: str,
    scope_binding: list[object],
    limit: int,
    rank_window: int,
) -> list[tuple[Any, ...]]:
    words = " ".join(terms)
    return db.query(
        f"SELECT id, session_id, role, created_at, content FROM ("
        f"  SELECT {_COLUMNS}, m.words FROM messages m"
        f"  WHERE m.words @@ plainto_tsquery('simple', hermes_fold(?)) {scope}"
        f"  ORDER BY m.id DESC LIMIT {int(rank_window)}"
        f") AS hits ORDER BY ts_rank_cd(words, plainto_tsquery('simple', hermes_fold(?))) "
        "DESC, id DESC LIMIT ?",
        [words, *scope_binding, words, limit],
    )


def substring_rows(
    db: StoreBackend, text: str, scope: str, scope_binding: list[object], limit: int
) -> list[tuple[Any, ...]]:
    if len(text) >= 3:
        # The trigram index answers LIKE over the folded text it was built from.
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return db.query(
            f"SELECT {_COLUMNS} FROM messages m "
            f"WHERE m.folded LIKE '%' || hermes_fold(?) || '%' {scope} "
            "ORDER BY m.id DESC LIMIT ?",
            [escaped, *scope_binding, limit],
        )
    # Trigrams need three characters: a shorter substring is a plain (slower) scan.
    return db.query(
        f"SELECT {_COLUMNS} FROM messages m "
        f"WHERE strpos(m.folded, hermes_fold(?)) > 0 {scope} "
        "ORDER BY m.id DESC LIMIT ?",
        [text, *scope_binding, limit],
    )
