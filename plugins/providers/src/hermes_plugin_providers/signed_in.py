"""An endpoint reached through a sign-in: the provider asks the sign-in for its token before
each request (it is renewed before it expires), and after the service refuses one, asks
for a new one once; a second refusal is one line saying to sign in again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hermes_sdk.context import WindowReporter
from hermes_sdk.ladder import TokenSource
from hermes_sdk.models import (
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    SightReporter,
)


class SignedInProvider:
    """A ModelProvider whose key is a sign-in's token, rebuilt when the token changes."""

    def __init__(
        self,
        settings: ProviderSettings,
        source: TokenSource,
        build: Callable[[ProviderSettings], ModelProvider],
        name: str,
    ) -> None:
        self._settings = settings
        self._source = source
        self._build = build
        self._name = name
        self._token: str | None = settings.api_key
        self._provider: ModelProvider | None = None
        self._retired: list[ModelProvider] = []
        """The client of the token before this one: a turn may still be streaming through
        it, so it is closed at the next change (a token lives minutes at least), or with
        this provider; never more than one kept, however long a gateway runs."""

    async def _current(self, token: str) -> ModelProvider:
        if self._provider is None or token != self._token:
            older, self._retired = self._retired, []
            if self._provider is not None:
                self._retired.append(self._provider)
            self._token = token
            self._provider = self._build(replace(self._settings, api_key=token))
            for provider in older:
                await provider.aclose()
        return self._provider

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        provider = await self._current(await self._source.token())
        try:
            return await provider.complete(request, on_text)
        except ProviderError as error:
            if error.kind is not ErrorKind.AUTH:
                raise
            refused = error
        renewed = await self._source.token(renew=True)  # raises, in one line, if it cannot
        try:
            return await (await self._current(renewed)).complete(request, on_text)
        except ProviderError as error:
            if error.kind is not ErrorKind.AUTH:
                raise
            raise ProviderError(
                ErrorKind.AUTH,
                f"{self._name} refused the sign-in's token twice ({refused}); sign in again: "
                f"hermes login {self._name}",
                status=error.status,
            ) from None

    def _any(self) -> ModelProvider:
        if self._provider is None:
            self._provider = self._build(self._settings)
        return self._provider

    async def context_window(self, model: str) -> int | None:
        provider = self._any()
        return (
            await provider.context_window(model) if isinstance(provider, WindowReporter) else None
        )

    def sees(self, model: str) -> bool | None:
        provider = self._any()
        return provider.sees(model) if isinstance(provider, SightReporter) else None

    async def aclose(self) -> None:
        for provider in [*self._retired, *([self._provider] if self._provider else [])]:
            await provider.aclose()
        self._retired.clear()
        self._provider = None
