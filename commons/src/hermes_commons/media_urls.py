"""Attachments from URLs a client sends (an API's ``image_url`` part, an editor's image
block): ``data:`` URLs are decoded, and http(s) URLs are fetched through the web tools'
SSRF guard (:mod:`hermes_commons.ssrf`; ``web.allow_private_hosts`` opens a host on purpose),
redirects judged hop by hop, the body read only up to the kind's cap. Either way the file
goes through :meth:`~hermes_sdk.media.MediaCache.ingest`, so its type is sniffed and a
disguised or oversized one is refused in one line (:class:`~hermes_sdk.media.MediaRefused`).

Importing this imports nothing heavy; a fetch imports httpx (``hermes-sdk[http]``).
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

from hermes_sdk.media import Attachment, AttachmentKind, MediaCache, MediaRefused, describe_size

__all__ = ["attachment_from_url", "from_data_url"]

FETCH_SECONDS = 30.0


def _short(url: str) -> str:
    return url if len(url) <= 80 else f"{url[:60]}…"


def from_data_url(
    url: str, cache: MediaCache, *, expect: AttachmentKind | None = None
) -> Attachment:
    """A ``data:[TYPE][;base64],DATA`` URL's content, checked and kept."""
    head, comma, payload = url.partition(",")
    if not comma:
        raise MediaRefused("a data: URL is refused: it has no ',' before its data")
    declared = head.removeprefix("data:").split(";")[0].strip() or None
    if head.endswith(";base64"):
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise MediaRefused("a data: URL is refused: its base64 data is not valid") from None
    else:
        data = unquote_to_bytes(payload)
    extension = mimetypes.guess_extension(declared or "") or ""
    name = f"{expect or 'file'}{extension}"
    return cache.ingest(data, name=name, declared=declared, expect=expect)


async def attachment_from_url(
    url: str,
    cache: MediaCache,
    config: Mapping[str, Any],
    *,
    expect: AttachmentKind | None = None,
    timeout: float = FETCH_SECONDS,
) -> Attachment:
    """The file at ``url`` (a ``data:`` URL, or http(s) through the SSRF guard), checked and
    kept. ``config`` is config.yaml as loaded, for ``web.allow_private_hosts``. Raises
    MediaRefused, one line naming the URL and why."""
    import asyncio

    if url.startswith("data:"):  # decoding, hashing and writing megabytes: off the loop
        return await asyncio.to_thread(from_data_url, url, cache, expect=expect)
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise MediaRefused(
            f"{_short(url)} is refused: only https, http and data: URLs are read "
            f"(not {scheme or 'a bare path'}:)"
        )
    from hermes_commons.ssrf import Refused, SsrfGuard
    from hermes_commons.ssrf_http import fetch, guarded_client

    web = config.get("web")
    opened = web.get("allow_private_hosts") if isinstance(web, Mapping) else None
    guard = SsrfGuard(tuple(opened or ()))
    cap = cache.limits.cap(expect) if expect else max(cache.limits.max_bytes.values())
    import httpx

    try:
        async with guarded_client(guard, timeout) as client:
            fetched = await fetch(client, guard, url, cap + 1)
    except Refused as exc:
        why = str(exc).removeprefix("refused ")
        raise MediaRefused(f"{_short(url)} is refused: {why}") from None
    except httpx.HTTPError as exc:
        raise MediaRefused(f"{_short(url)} could not be fetched: {type(exc).__name__}") from None
    if fetched.status != 200:
        raise MediaRefused(
            f"{_short(url)} could not be fetched: the server answered {fetched.status}"
        )
    if fetched.truncated:
        raise MediaRefused(
            f"{_short(url)} is refused: it is over the {describe_size(cap)} cap "
            f"(media.max_mb.{expect or 'file'})"
        )
    name = urlsplit(fetched.url).path.rsplit("/", 1)[-1] or f"{expect or 'file'}"
    return await asyncio.to_thread(
        cache.ingest, fetched.body, name=name, declared=fetched.content_type or None, expect=expect
    )
