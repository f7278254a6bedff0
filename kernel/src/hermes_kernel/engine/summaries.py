"""The model that writes compaction summaries: the auxiliary model (``auxiliary:``) or the
session's own. A failed call is retried once; after that failure the model rests, and the
context engine writes its summary without it until the rest is over."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from hermes_kernel.engine.aside import side_request
from hermes_kernel.engine.models import ModelRoute, response_usages
from hermes_kernel.store.sessions import Usage
from hermes_sdk.context import Summarizer, SummaryUnavailable
from hermes_sdk.models import ModelUsage, ProviderError

__all__ = ["COOLDOWNS", "SUMMARY_SECONDS", "SummaryModel"]

COOLDOWNS = (60.0, 300.0, 900.0)
"""After the summary model fails (twice in a row), it is not asked again for this long; each
failure in a row moves one step along."""
SUMMARY_SECONDS = 120.0


class SummaryModel:
    """The summary calls: the auxiliary model (``auxiliary:``) or the session's own, retried
    once; after that failure the model rests (60 s, then 300 s, then 900 s) and summaries
    are written without it. One success ends the cooling."""

    def __init__(
        self,
        auxiliary: Callable[[], ModelRoute | None],
        pricing: Callable[[str, ModelUsage], float | None],
        clock: Callable[[], float] = time.monotonic,
        timeout: float = SUMMARY_SECONDS,
    ) -> None:
        self.auxiliary = auxiliary
        """The auxiliary model, built when first asked for; None: the session's is used."""
        self.pricing = pricing
        self.clock = clock
        self.timeout = timeout
        self.failures = 0
        self.rest_until = 0.0

    def summarizer(self, route: ModelRoute, usages: list[Usage]) -> Summarizer:
        """A :data:`~hermes_sdk.context.Summarizer` that adds each call's usage to
        ``usages``; ``route`` is the session's, used without an auxiliary model."""
        chosen = self.auxiliary() or route

        async def summarize(instructions: str, text: str, max_tokens: int) -> str:
            now = self.clock()
            if now < self.rest_until:
                raise SummaryUnavailable(
                    f"the summary model failed recently; it is asked again in "
                    f"{self.rest_until - now:.0f} s"
                )
            error = ""
            for _ in range(2):
                try:
                    reply = await self._ask(chosen, instructions, text, max_tokens, usages)
                except (ProviderError, TimeoutError) as exc:
                    error = str(exc) or "it did not answer in time"
                    continue
                if reply.strip():
                    self.failures = 0
                    self.rest_until = 0.0
                    return reply
                error = "it returned an empty summary"
            rest = COOLDOWNS[min(self.failures, len(COOLDOWNS) - 1)]
            self.failures += 1
            self.rest_until = self.clock() + rest
            raise SummaryUnavailable(
                f"the summary model ({chosen.name} / {chosen.model}) failed twice: {error}; "
                f"it is asked again in {rest:.0f} s"
            )

        return summarize

    async def _ask(
        self,
        route: ModelRoute,
        instructions: str,
        text: str,
        max_tokens: int,
        usages: list[Usage],
    ) -> str:
        request = side_request(route, instructions, text, max_tokens)
        async with asyncio.timeout(self.timeout):
            response = await route.provider.complete(request)
        usages.extend(response_usages(route, response, self.pricing))
        return response.content
