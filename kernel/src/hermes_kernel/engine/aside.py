"""A model call made on the side, from a tool's worker thread: the smart-approval judge, a
summary of search hits. It runs on the turn's event loop, where the provider's client lives,
and is not part of any transcript."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence

from hermes_kernel.engine.models import ModelRoute
from hermes_sdk.models import ChatMessage, ImagePart, ModelRequest, ProviderError

__all__ = ["complete_from_thread", "side_request"]

ASIDE_SECONDS = 60.0


def side_request(
    route: ModelRoute,
    instructions: str,
    text: str,
    max_tokens: int,
    images: Sequence[ImagePart] = (),
) -> ModelRequest:
    """A call outside any transcript: instructions, one text (with ``images``, for a model
    that sees), no tools, no sampling."""
    return ModelRequest(
        model=route.model,
        messages=[
            ChatMessage("system", instructions),
            ChatMessage("user", text, images=tuple(images)),
        ],
        max_tokens=max_tokens,
        temperature=0.0,
    )


def complete_from_thread(
    route: ModelRoute,
    loop: asyncio.AbstractEventLoop,
    instructions: str,
    text: str,
    *,
    max_tokens: int = 1024,
    timeout: float = ASIDE_SECONDS,
    images: Sequence[ImagePart] = (),
) -> str:
    """The model's reply; RuntimeError (one line) when the call fails or times out."""
    request = side_request(route, instructions, text, max_tokens, images)
    future = asyncio.run_coroutine_threadsafe(route.provider.complete(request), loop)
    try:
        return future.result(timeout).content
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise RuntimeError(f"the model did not answer within {timeout:.0f} s") from None
    except ProviderError as exc:
        raise RuntimeError(f"the model call failed: {exc}") from None
