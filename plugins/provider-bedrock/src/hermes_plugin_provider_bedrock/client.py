"""AWS Bedrock's Converse and ConverseStream over httpx, signed with botocore.

Credentials: a Bedrock API key (the provider's ``api_key``, ``AWS_BEARER_TOKEN_BEDROCK``
by hermes-agent's name) is sent as a bearer token; without one, every request is signed
with SigV4 from the AWS credential chain botocore resolves (the environment,
``options.profile`` or ``AWS_PROFILE``, SSO, an assumed role, the container or instance
metadata), refreshed as it nears expiry. The region comes from the endpoint's host
(``bedrock-runtime.us-east-1.amazonaws.com``), else ``options.region``, else the chain's.
A streamed reply is AWS's binary event stream, decoded with botocore's own decoder.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from hermes_commons.http import LoopClient, cut_short, raise_for_status, transport_errors
from hermes_commons.stated_models import StatedModels
from hermes_commons.text import one_line
from hermes_plugin_provider_bedrock.wire import StreamAssembly, payload, response_of
from hermes_sdk.models import (
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ProviderSettings,
    classify_http_error,
)

_REGION_IN_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")
_STREAM_TYPE = "application/vnd.amazon.eventstream"
CLAUDE_WINDOW = 200_000
_SEES = re.compile(r"anthropic\.claude-(3|sonnet|opus|haiku|[4-9])|amazon\.nova-(lite|pro|premier)")
# Exceptions inside a stream (``:exception-type``), as the HTTP statuses they stand for.
_STREAM_STATUS = {
    "throttlingException": 429,
    "serviceUnavailableException": 503,
    "validationException": 400,
    "modelStreamErrorException": 424,
    "internalServerException": 500,
}
_NO_CREDENTIALS = (
    "no AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, an "
    "AWS_PROFILE (or providers.NAME.options.profile), a role, or a Bedrock API key "
    "(AWS_BEARER_TOKEN_BEDROCK as the provider's api_key_env)"
)


class _Signer:
    """SigV4 with the credentials botocore's chain resolves (in a thread: resolving may
    read files or ask the instance metadata service)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._profile = options.get("profile")
        self._region = options.get("region")
        self._credentials: Any = None
        self._lock = threading.Lock()  # a provider may serve several event loops

    def _resolve(self) -> None:
        import botocore.session
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            session = botocore.session.Session(profile=self._profile)
            credentials = session.get_credentials()
            # AWS_REGION is the SDKs' common name; botocore itself reads AWS_DEFAULT_REGION
            # and the profile's region.
            region = (
                self._region
                or os.environ.get("AWS_REGION")
                or session.get_config_variable("region")
            )
        except (BotoCoreError, ClientError) as error:
            raise ProviderError(ErrorKind.AUTH, f"AWS credentials: {_one_line(error)}") from None
        if credentials is None:
            raise ProviderError(ErrorKind.AUTH, _NO_CREDENTIALS)
        self._credentials, self._region = credentials, region

    def _frozen(self) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        with self._lock:  # one resolution at a time, however many turns ask
            if self._credentials is None:
                self._resolve()
        try:
            return self._credentials.get_frozen_credentials()  # refreshed when near expiry
        except (BotoCoreError, ClientError) as error:  # an assumed role or SSO refused
            raise ProviderError(
                ErrorKind.AUTH, f"AWS credentials could not be refreshed: {_one_line(error)}"
            ) from None

    async def headers(self, url: str, body: bytes, region: str | None) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        frozen = await asyncio.to_thread(self._frozen)
        region = region or self._region
        if not region:
            raise ProviderError(
                ErrorKind.BAD_REQUEST,
                "Bedrock needs a region: use the bedrock-runtime.REGION.amazonaws.com "
                "endpoint, or set providers.NAME.options.region (or AWS_REGION)",
            )
        request = AWSRequest(
            method="POST", url=url, data=body, headers={"Content-Type": "application/json"}
        )
        SigV4Auth(frozen, "bedrock", region).add_auth(request)
        return dict(request.headers.items())


class BedrockProvider:
    """A :class:`hermes_sdk.models.ModelProvider` for ``{base_url}/model/{id}/converse``."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._options = dict(settings.options)
        bearer = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._http = LoopClient(settings, bearer)
        self._signer = None if settings.api_key else _Signer(self._options)
        found = _REGION_IN_HOST.search(settings.base_url)
        self._region = found.group(1) if found else self._options.get("region")
        self._stated = StatedModels(settings.options)

    async def context_window(self, model: str) -> int | None:
        """A window the endpoint's config states, else Claude's 200,000 tokens (a
        :class:`~hermes_sdk.context.WindowReporter`); another model's is unknown."""
        stated = self._stated.window(model)
        if stated is not None:
            return stated
        return CLAUDE_WINDOW if "anthropic.claude" in model else None

    def sees(self, model: str) -> bool | None:
        """Claude 3 and later and Nova Lite and Pro take images; others are unknown."""
        if self._stated.sees(model) or _SEES.search(model):
            return True
        return None

    @property
    def client(self) -> httpx.AsyncClient:
        return self._http.get()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self, request: ModelRequest, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        body = orjson.dumps(payload(request, self._options))
        route = "converse-stream" if self._settings.stream else "converse"
        model = quote(request.model, safe="")  # ARNs and ids like ...-v1:0, encoded whole
        url = f"{self._settings.base_url.rstrip('/')}/model/{model}/{route}"
        headers = {"Content-Type": "application/json"}
        if self._signer is not None:
            headers = await self._signer.headers(url, body, self._region)
        try:
            async with transport_errors(self._settings):
                if self._settings.stream:
                    return await self._streamed(url, body, headers, on_text)
                return await self._whole(url, body, headers)
        except ProviderError as error:
            raise _said_plainly(error) from None

    def _bad(self, what: str) -> ProviderError:
        return ProviderError(ErrorKind.BAD_RESPONSE, f"{self._settings.base_url} {what}")

    async def _whole(self, url: str, body: bytes, headers: Mapping[str, str]) -> ModelResponse:
        response = await self.client.post(url, content=body, headers=headers)
        await raise_for_status(response)
        try:
            data = response.json()
            message = data["output"]["message"]
            return response_of(message["content"], data.get("stopReason"), data.get("usage"))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._bad("answered something that is not a Converse reply") from None

    async def _streamed(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        on_text: Callable[[str], None] | None,
    ) -> ModelResponse:
        from botocore.eventstream import EventStreamBuffer, ParserError

        assembly = StreamAssembly()
        async with self.client.stream("POST", url, content=body, headers=headers) as response:
            await raise_for_status(response)
            kind = response.headers.get("content-type", "")
            if not kind.startswith(_STREAM_TYPE):
                raise self._bad(
                    "answered a streamed request with something that is not an event stream"
                )
            decoder = EventStreamBuffer()
            async for data in response.aiter_bytes():
                decoder.add_data(data)
                try:
                    for message in decoder:
                        said = self._event(assembly, message)
                        if said and on_text is not None:
                            on_text(said)
                except ParserError:
                    raise self._bad("streamed an event that could not be decoded") from None
        if not assembly.done:
            raise cut_short(self._settings)
        try:
            return assembly.response()
        except (KeyError, TypeError, ValueError):
            raise self._bad("streamed content blocks of an unexpected shape") from None

    def _event(self, assembly: StreamAssembly, message: Any) -> str | None:
        headers = message.headers
        if headers.get(":message-type") == "exception":
            name = str(headers.get(":exception-type") or "")
            status = _STREAM_STATUS.get(name, 500)
            raise classify_http_error(status, message.payload.decode("utf-8", "replace"))
        if headers.get(":message-type") != "event":
            return None
        try:
            event = orjson.loads(message.payload or b"{}")
            return assembly.add(str(headers.get(":event-type") or ""), event)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
            raise self._bad("streamed an event of an unexpected shape") from None


def _said_plainly(error: ProviderError) -> ProviderError:
    """AWS's refusals of credentials read as what to fix, not as a bad API key."""
    if error.kind is not ErrorKind.AUTH:
        return error
    said = str(error).split(": ", 1)[-1].split("; check the API key")[0]
    return ProviderError(
        ErrorKind.AUTH,
        f"Bedrock refused the credentials (HTTP {error.status}): {said}; check the AWS keys, "
        "profile or role (or the Bedrock API key)",
        status=error.status,
    )


def _one_line(error: BaseException) -> str:
    return one_line(str(error), 300) or type(error).__name__
