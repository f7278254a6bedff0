"""Finding the image (a file the media cache keeps, or a URL fetched through the SSRF
guard) and asking a model that sees about it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hermes_commons.media_urls import attachment_from_url
from hermes_sdk.media import Attachment, MediaCache
from hermes_sdk.tooling import ToolContext

__all__ = ["vision_analyze"]


def _kept(image: str, cache: MediaCache) -> Attachment:
    """A file of the media cache, checked again (only the cache: the model must not read the
    host's other files this way, whatever backend its commands run in)."""
    path = Path(image).expanduser()
    try:
        inside = path.resolve().is_relative_to(cache.folder.resolve())
    except OSError:
        inside = False
    if not inside:
        raise ValueError(
            f"{image} is not an image the user sent: give the path after 'kept at' in their "
            "message, or an http(s) URL"
        )
    return cache.ingest_path(path, expect="image")


async def vision_analyze(image: str, question: str, *, context: ToolContext) -> str:
    if not question.strip():
        raise ValueError("question is empty: say what to find out about the image")
    cache = MediaCache.of_home(context.home, context.config)
    image = image.strip()
    if image.startswith(("http://", "https://", "data:")):
        found = await attachment_from_url(image, cache, context.config, expect="image")
    else:
        found = await asyncio.to_thread(_kept, image, cache)
    return await asyncio.to_thread(context.ask_model_about_images, question, [found])
