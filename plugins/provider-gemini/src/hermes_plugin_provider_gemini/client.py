"""Gemini's ``generateContent`` and ``streamGenerateContent`` over httpx, for the Gemini API
(an API key) and Vertex AI (Google sign-in: a service account or Application Default
Credentials, or an express-mode API key). See :mod:`.wire` for the format."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from hermes_commons.http import (
    JSON_HEADERS,
    LoopClient,
    cut_short,
    event_stream,
    raise_for_status,
    transport_errors,
)
from hermes_commons.sse import SSEDecoder
from hermes_commons.stated_models import StatedModels
from hermes_plugin_provider_gemini.wire import Reading, payload
from hermes_sdk.models import (
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    classify_http_error,
)

GEMINI_WINDOW = 1_048_576
_CURRENT = re.compile(r"^gemini-([2-9])", re.IGNORECASE)
_BAD_KEY = "api key not valid"
"""The Gemini API says a wrong key with a 400 (INVALID_ARGUMENT): read as what it is."""


class GeminiProvider:
    """A :class:`hermes_sdk.models.ModelProvider` for the Gemini API:
    ``POST {base_url}/models/{model}:generateContent`` with ``x-goog-api-key``."""

    service = "the Gemini API"

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._options = dict(settings.options)
        self._http = LoopClient(settings, self._fixed_headers(settings))
        self._stated = StatedModels(settings.options)

    async def context_window(self, model: str) -> int | None:
        """A window the endpoint's config states, else a million tokens for the Gemini 2
        and later models (a :class:`~hermes_sdk.context.WindowReporter`)."""
        stated = self._stated.window(model)
        if stated is not None:
            return stated
        return GEMINI_WINDOW if _CURRENT.match(model.rsplit("/", 1)[-1]) else None

    def sees(self, model: str) -> bool | None:
        """Every Gemini model takes images (a :class:`~hermes_sdk.models.SightReporter`)."""
        if self._stated.sees(model):
            return True
        return True if model.rsplit("/", 1)[-1].lower().startswith("gemini") else None

    def _fixed_headers(self, settings: ProviderSettings) -> dict[str, str]:
        return {"x-goog-api-key": settings.api_key} if settings.api_key else {}

    @property
    def client(self) -> httpx.AsyncClient:
        return self._http.get()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def model_path(self, model: str) -> str:
        """The model's resource path below ``base_url``."""
        return f"models/{quote(model.removeprefix('models/'), safe='/@.-_')}"

    async def request_headers(self, *, renew: bool = False) -> dict[str, str]:
        """Headers a request needs beyond the fixed ones (a token that expires)."""
        return {}

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        try:
            return await self._complete(request, on_text, renew=False)
        except ProviderError as error:
            if error.status != 401 or not await self.renewable():
                raise
            # A token that expired early (revoked, a skewed clock): a fresh one, once.
            return await self._complete(request, on_text, renew=True)

    async def renewable(self) -> bool:
        return False

    async def _complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None, *, renew: bool
    ) -> ModelResponse:
        body = orjson.dumps(payload(request, self._options))
        path = await self.model_path(request.model)
        headers = await self.request_headers(renew=renew)
        try:
            async with transport_errors(self._settings):
                if self._settings.stream:
                    return await self._streamed(path, body, headers, on_text)
                return await self._whole(path, body, headers)
        except ProviderError as error:
            if error.status == 400 and _BAD_KEY in str(error).lower():
                raise ProviderError(
                    ErrorKind.AUTH,
                    f"{self.service} refused the API key (API key not valid); check it",
                    status=400,
                ) from None
            raise

    def _bad(self, what: str) -> ProviderError:
        return ProviderError(ErrorKind.BAD_RESPONSE, f"{self._settings.base_url} {what}")

    async def _whole(self, path: str, body: bytes, headers: Mapping[str, str]) -> ModelResponse:
        response = await self.client.post(
            f"{path}:generateContent", content=body, headers={**JSON_HEADERS, **headers}
        )
        await raise_for_status(response)
        reading = Reading()
        try:
            data = response.json()
            reading.add(data)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._bad("answered something that is not a Gemini reply") from None
        return reading.response(self.service)

    async def _streamed(
        self,
        path: str,
        body: bytes,
        headers: Mapping[str, str],
        on_text: Callable[[str], None] | None,
    ) -> ModelResponse:
        reading = Reading()
        route = f"{path}:streamGenerateContent?alt=sse"
        async with event_stream(self.client, route, body, self._settings, headers) as response:
            decoder = SSEDecoder()
            async for line in response.aiter_lines():
                decoded = decoder.feed(line)
                if decoded is None:
                    continue
                try:
                    chunk = orjson.loads(decoded[1])
                except orjson.JSONDecodeError:
                    raise self._bad("streamed a chunk that is not JSON") from None
                if not isinstance(chunk, dict):
                    continue
                if "error" in chunk:  # a failure after the stream began
                    raise _stream_error(chunk)
                try:
                    said = reading.add(chunk)
                except (KeyError, TypeError, AttributeError):
                    raise self._bad("streamed a chunk of an unexpected shape") from None
                if on_text is not None:
                    for text in said:
                        on_text(text)
        if reading.finish is None and reading.blocked is None:
            raise cut_short(self._settings)
        return reading.response(self.service)


def _stream_error(chunk: Mapping[str, Any]) -> ProviderError:
    """An error sent inside the stream, classified as its HTTP twin (its ``code``)."""
    error = chunk.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    return classify_http_error(status, orjson.dumps(chunk).decode())


class VertexProvider(GeminiProvider):
    """Gemini models on Vertex AI. ``base_url`` is the regional endpoint
    (``https://us-central1-aiplatform.googleapis.com``) or a full ``.../v1/projects/P/
    locations/L`` path; the project comes from ``options.project``, else the credentials.
    Signed in with ``options.credentials_file`` (a service account's JSON key), else
    Application Default Credentials; an API key, when one is set, is used instead
    (Vertex's express mode)."""

    service = "Vertex AI"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        from hermes_plugin_provider_gemini.google_sign_in import GoogleSignIn

        self._sign_in = None if settings.api_key else GoogleSignIn(self._options)

    async def renewable(self) -> bool:
        return self._sign_in is not None and self._sign_in.stale()

    async def request_headers(self, *, renew: bool = False) -> dict[str, str]:
        if self._sign_in is None:
            return {}
        token = await self._sign_in.token(renew=renew)
        return {"Authorization": f"Bearer {token}"}

    async def model_path(self, model: str) -> str:
        name = quote(model.rsplit("/", 1)[-1], safe="@.-_")
        base = self._settings.base_url.rstrip("/")
        if "/projects/" in base or self._sign_in is None:
            prefix = "" if "/projects/" in base else "v1/"
            return f"{prefix}publishers/google/models/{name}"
        project = self._options.get("project") or await self._sign_in.project()
        if not project:
            raise ProviderError(
                ErrorKind.AUTH,
                "Vertex AI needs a project: set providers.NAME.options.project (or "
                "GOOGLE_CLOUD_PROJECT)",
            )
        location = self._options.get("location") or _location_of(base)
        return f"v1/projects/{project}/locations/{location}/publishers/google/models/{name}"


def _location_of(base_url: str) -> str:
    """``us-central1`` from ``https://us-central1-aiplatform.googleapis.com``; the global
    endpoint (and anything else) is ``global``."""
    host = httpx.URL(base_url).host
    head, found, _ = host.partition("-aiplatform.")
    return head if found else "global"
