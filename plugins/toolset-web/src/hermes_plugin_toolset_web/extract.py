"""A fetched page as text the model can read: HTML as Markdown (main text, headings, links,
tables; no scripts, styles, menus or footers) by trafilatura, PDF text by pypdf, plain text
and JSON as they are; the page's charset honoured; capped at ``page_chars``."""

from __future__ import annotations

import contextlib
import io
import json

from hermes_plugin_toolset_web.fetch import Page

__all__ = ["page_text"]

_TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "application/json", "application/xml")


def _decode(page: Page) -> str:
    if page.charset:
        try:
            return page.body.decode(page.charset, errors="replace")
        except LookupError:  # a charset Python does not know
            pass
    from charset_normalizer import from_bytes

    best = from_bytes(page.body).best()
    return str(best) if best is not None else page.body.decode("utf-8", errors="replace")


def _html(page: Page) -> tuple[str, str | None]:
    import trafilatura

    html = _decode(page)
    text = trafilatura.extract(
        html,
        url=page.url,
        output_format="markdown",
        include_tables=True,
        include_links=True,
        include_formatting=True,
        favor_recall=True,
    )
    metadata = trafilatura.extract_metadata(html)
    title = metadata.title if metadata is not None else None
    return text or "", title


def _pdf(page: Page) -> tuple[str, str | None]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(page.body))
        pages = [p.extract_text() or "" for p in reader.pages]
    except (PdfReadError, ValueError, KeyError) as exc:
        return f"[the PDF could not be read: {exc}]", None
    title = reader.metadata.title if reader.metadata else None
    return "\n\n".join(f"[page {n}]\n{text.strip()}" for n, text in enumerate(pages, 1)), title


def page_text(page: Page, page_chars: int) -> tuple[str, str | None]:
    """(text, title); the text says when the page or its text was cut."""
    kind = page.content_type
    if kind in ("text/html", "application/xhtml+xml") or (
        not kind and b"<html" in page.body[:2000].lower()
    ):
        text, title = _html(page)
    elif kind == "application/pdf" or page.body.startswith(b"%PDF-"):
        text, title = _pdf(page)
    elif kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith("+json"):
        text, title = _decode(page), None
        if kind.endswith("json"):
            with contextlib.suppress(ValueError):  # shown as it came when it is not JSON
                text = json.dumps(json.loads(text), ensure_ascii=False, indent=1)
    else:
        return f"[{kind or 'unknown'} content, {len(page.body):,} bytes: not text]", None
    if len(text) > page_chars:
        text = text[:page_chars] + f"\n[… cut at {page_chars:,} characters (web.page_chars)]"
    if page.truncated:
        text += "\n[… the page is larger than web.max_page_bytes; only its start was read]"
    return text, title
