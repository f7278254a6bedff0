"""Several API keys (or sign-ins) for one endpoint, used as one provider.

Rules: a rate limit is retried once on the same key (unless the server asks for a wait
longer than a few seconds), then the next key is used; billing
(out of credit) rotates at once; a rejected key (auth) is read again from the environment
or .env in case it was replaced, then rotated. A key that failed cools down, with
exponential backoff per key. Every key is only ever sent to the pool's own endpoint: each
key gets its own client built from the same settings. Given a home, the keys' states are
kept across processes (``hermes_commons.credential_states``): a key cooling down in one
command is skipped by the next, and ``hermes auth list`` shows it. A sign-in's member is
given as the function that makes its provider (which renews its own token).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from hermes_sdk.context import WindowReporter
from hermes_sdk.models import (
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    SightReporter,
)

RETRY_WAIT_CAP = 5.0  # a longer Retry-After means: use another key now
BASE_COOLDOWN = 30.0
MAX_COOLDOWN = 1800.0


@dataclass
class _Key:
    name: str  # the variable it came from, for messages (never the key itself)
    value: str | Callable[[], ModelProvider]
    """The key, or what makes the member's provider itself (a sign-in's)."""
    provider: ModelProvider | None = None
    failures: int = 0
    cool_until: float = 0.0
    restored: bool = False  # its cooling down was read from another process's record


class PooledProvider:
    """A ModelProvider that rotates over keys; built by the kernel, not a plugin."""

    def __init__(
        self,
        settings: ProviderSettings,
        keys: Sequence[tuple[str, str | Callable[[], ModelProvider]]],
        build: Callable[[ProviderSettings], ModelProvider],
        reread: Callable[[str], str | None] = lambda _name: None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        kept: tuple[str, str] | None = None,
    ) -> None:
        """``kept`` is (home, endpoint name): where the keys' states are kept."""
        if not keys:
            raise ValueError("a credential pool needs at least one key")
        self._settings = settings
        self._keys = [_Key(name, value) for name, value in keys]
        self._build = build
        self._reread = reread
        self._clock = clock
        self._sleep = sleep
        self._current = 0
        self._kept = kept
        if kept is not None:
            from hermes_commons.credential_states import states

            known = states(kept[0]).get(kept[1], {})
            for key in self._keys:
                until = float((known.get(key.name) or {}).get("until") or 0)
                if until:
                    key.cool_until = self._clock() + max(0.0, until - time.time())
                    key.restored = True

    @property
    def key_names(self) -> list[str]:
        return [key.name for key in self._keys]

    def _provider(self, key: _Key) -> ModelProvider:
        if key.provider is None:
            if isinstance(key.value, str):
                key.provider = self._build(replace(self._settings, api_key=key.value))
            else:
                key.provider = key.value()
        return key.provider

    def _ready(self) -> list[int]:
        """Key indexes to try, starting at the current one; cooling keys are skipped unless
        every key is cooling (then the one that recovers first is tried)."""
        now = self._clock()
        order = [(self._current + i) % len(self._keys) for i in range(len(self._keys))]
        ready = [i for i in order if self._keys[i].cool_until <= now]
        return ready or [min(order, key=lambda i: self._keys[i].cool_until)]

    async def _cool(self, key: _Key, error: ProviderError) -> None:
        key.failures += 1
        backoff = min(MAX_COOLDOWN, BASE_COOLDOWN * 2 ** (key.failures - 1))
        wait = max(backoff, error.retry_after or 0.0)
        key.cool_until = self._clock() + wait
        if self._kept is not None:
            from hermes_commons.credential_states import note

            state = {ErrorKind.BILLING: "exhausted", ErrorKind.AUTH: "refused"}.get(
                error.kind, "cooling down"
            )
            # A file lock may wait: off the event loop.
            await asyncio.to_thread(
                note, *self._kept, key.name, state, time.time() + wait, error.kind.value
            )

    async def _refresh(self, key: _Key) -> bool:
        """After an auth error: has the key been replaced in the environment or .env? (A
        sign-in has renewed itself already.)"""
        if not isinstance(key.value, str):
            return False
        fresh = self._reread(key.name)
        if not fresh or fresh == key.value:
            return False
        if key.provider is not None:
            await key.provider.aclose()
        key.value, key.provider = fresh, None
        return True

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        last: ProviderError | None = None
        for index in self._ready():
            key = self._keys[index]
            retried = refreshed = False
            while True:
                try:
                    response = await self._provider(key).complete(request, on_text)
                except ProviderError as error:
                    last = error
                    wait = error.retry_after or 1.0
                    if (
                        error.kind is ErrorKind.RATE_LIMIT
                        and not retried
                        and wait <= RETRY_WAIT_CAP
                    ):
                        retried = True
                        await self._sleep(wait)
                        continue
                    if error.kind is ErrorKind.AUTH and not refreshed:
                        refreshed = True
                        if await self._refresh(key):
                            continue
                    if error.kind in (ErrorKind.RATE_LIMIT, ErrorKind.BILLING, ErrorKind.AUTH):
                        await self._cool(key, error)
                        break  # rotate to the next key
                    if error.kind is ErrorKind.CONNECTION and not isinstance(key.value, str):
                        # A sign-in that cannot renew its token for now (its issuer is down)
                        # may be the only one: the next account is tried, this one is left
                        # alone a while (not kept: it is no verdict on the account).
                        key.cool_until = self._clock() + BASE_COOLDOWN
                        break
                    raise  # not the key's fault: the engine retries or falls back
                if (key.failures or key.restored) and self._kept is not None:
                    from hermes_commons.credential_states import clear

                    await asyncio.to_thread(clear, *self._kept, key.name)
                key.failures, key.restored = 0, False
                self._current = index
                return response
        assert last is not None
        raise ProviderError(
            last.kind,
            f"every key in the pool failed ({', '.join(self.key_names)}); last: {last}",
            status=last.status,
            retry_after=last.retry_after,
            stated_window=last.stated_window,
        )

    async def context_window(self, model: str) -> int | None:
        """What the endpoint's provider says of its model's window (every key's is the same
        provider), or None when it cannot say."""
        provider = self._provider(self._keys[self._current])
        if not isinstance(provider, WindowReporter):
            return None
        return await provider.context_window(model)

    def sees(self, model: str) -> bool | None:
        """What the endpoint's provider says of whether its model takes images."""
        provider = self._provider(self._keys[self._current])
        return provider.sees(model) if isinstance(provider, SightReporter) else None

    async def aclose(self) -> None:
        for key in self._keys:
            if key.provider is not None:
                await key.provider.aclose()
                key.provider = None
