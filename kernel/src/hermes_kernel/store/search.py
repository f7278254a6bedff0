"""Full-text search over every message: ranked word search, and substring search for CJK,
code and parts of words. Which mode, the filters and the snippets are the kernel's; the
matching is the store engine's (:meth:`~hermes_sdk.store_engine.Database.find_words`), which
binds user text as a parameter, so no input can cause a syntax error."""

from __future__ import annotations

import contextlib
import enum
import re
from dataclasses import dataclass, replace

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import StoreBusyError


class SearchMode(enum.StrEnum):
    AUTO = "auto"  # trigrams for CJK or code, words otherwise; the other if nothing matched
    WORDS = "words"
    TRIGRAMS = "trigrams"


@dataclass(frozen=True)
class SearchFilters:
    """Narrow a search; every field left None matches everything."""

    session_id: str | None = None
    role: str | None = None
    since: float | None = None
    until: float | None = None
    user_scope: str | None = None
    """Only this person's sessions: a chat user never searches another's history."""
    exclude_sources: tuple[str, ...] = ()

    def sql(self) -> tuple[str, list[object]]:
        """AND-clauses over the alias ``m`` (messages), and their bindings."""
        clauses: list[str] = []
        bindings: list[object] = []
        for clause, value in (
            ("m.session_id = ?", self.session_id),
            ("m.role = ?", self.role),
            ("m.created_at >= ?", self.since),
            ("m.created_at < ?", self.until),
            ("m.session_id IN (SELECT id FROM sessions WHERE user_scope = ?)", self.user_scope),
        ):
            if value is not None:
                clauses.append(clause)
                bindings.append(value)
        if self.exclude_sources:
            marks = ", ".join("?" for _ in self.exclude_sources)
            clauses.append(
                f"m.session_id NOT IN (SELECT id FROM sessions WHERE source IN ({marks}))"
            )
            bindings.extend(self.exclude_sources)
        return "".join(f" AND {clause}" for clause in clauses), bindings


@dataclass(frozen=True)
class SearchHit:
    message_id: int
    session_id: str
    role: str
    created_at: float
    snippet: str


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# Code, not prose: brackets, operators and paths, or punctuation joining two word characters
# (os.path, a::b, x->y). A question mark or an apostrophe ("friday's") is prose.
_CODE_LIKE = re.compile(r"[()\[\]{}<>=/\\$#@|&*+`~^]|\w[.:\-]+\w")
_WORD = re.compile(r"\w+")


def choose_mode(query: str) -> SearchMode:
    """Words split on spaces; CJK has none, and code's punctuation matters: use trigrams."""
    if _CJK.search(query) or _CODE_LIKE.search(query):
        return SearchMode.TRIGRAMS
    return SearchMode.WORDS


def query_terms(text: str) -> list[str]:
    """The words to match; single letters ("friday's" -> "s") only when nothing else is left."""
    words = _WORD.findall(text)
    return [w for w in words if len(w) > 1] or words


def search(
    db: StoreBackend,
    query: str,
    *,
    mode: SearchMode = SearchMode.AUTO,
    session_id: str | None = None,
    limit: int = 20,
    filters: SearchFilters | None = None,
) -> list[SearchHit]:
    """Messages matching ``query``, best first (words) or newest first (short substrings).

    In AUTO mode a word search that finds nothing falls back to a substring search, so
    part of a word ("config" in "reconfigure") still finds something.
    """
    text = query.strip()
    if not text:
        return []
    with contextlib.suppress(StoreBusyError):  # another process is writing: search what is
        db.index_pending()  # indexed; normally this adds what was saved since a turn ended
    if mode is SearchMode.AUTO:
        chosen = choose_mode(text)
        other = SearchMode.TRIGRAMS if chosen is SearchMode.WORDS else SearchMode.WORDS
        hits = search(db, text, mode=chosen, session_id=session_id, limit=limit, filters=filters)
        if hits:
            return hits
        return search(db, text, mode=other, session_id=session_id, limit=limit, filters=filters)
    if session_id:
        filters = replace(filters or SearchFilters(), session_id=session_id)
    scope, scope_binding = (filters or SearchFilters()).sql()
    if mode is SearchMode.WORDS:
        terms = query_terms(text)
        if not terms:
            return []
        rows = db.find_words(terms, scope, scope_binding, limit)
        return [
            SearchHit(row[0], row[1], row[2], row[3], word_snippet(str(row[4] or ""), terms))
            for row in rows
        ]
    rows = db.find_substrings(text, scope, scope_binding, limit)
    return [
        SearchHit(row[0], row[1], row[2], row[3], substring_snippet(str(row[4] or ""), text))
        for row in rows
    ]


def word_snippet(content: str, terms: list[str], width: int = 120) -> str:
    """About ``width`` characters around the first matching term, terms in [brackets]."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b", re.IGNORECASE)
    found = pattern.search(content)
    start = max(0, (found.start() if found else 0) - width // 3)
    end = min(len(content), start + width)
    excerpt = pattern.sub(lambda m: f"[{m.group(0)}]", content[start:end])
    return ("…" if start else "") + excerpt + ("…" if end < len(content) else "")


def substring_snippet(content: str, needle: str, width: int = 96) -> str:
    """About ``width`` characters around the first place ``needle`` occurs (any case), each
    occurrence in [brackets]."""
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    found = pattern.search(content)
    start = max(0, (found.start() if found else 0) - width // 3)
    end = min(len(content), start + width)
    excerpt = pattern.sub(lambda m: f"[{m.group(0)}]", content[start:end])
    return ("…" if start else "") + excerpt + ("…" if end < len(content) else "")
