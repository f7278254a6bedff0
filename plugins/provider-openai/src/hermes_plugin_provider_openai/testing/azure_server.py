"""A scripted Azure OpenAI / Azure AI Foundry server on loopback: the kit's chat-completions
server behind Azure's routes and key check, written from Azure's REST reference and the
official ``openai`` client's ``AzureOpenAI`` (which talks to it unmodified, see the
plugin's tests).

Routes: ``/openai/deployments/{deployment}/chat/completions?api-version=V`` (only the
deployments in :attr:`deployments`, and only with an ``api-version``),
``/openai/v1/chat/completions`` and Foundry's ``/models/chat/completions?api-version=V``.
The key must come in ``api-key`` (or as a bearer token on the v1 route) and be
:attr:`api_key`; Azure's own words refuse anything else, as they refuse a missing
version or an unknown deployment.

    with ScriptedAzureOpenAIServer() as server:
        server.deployments = {"chat": "gpt-4o"}
        server.queue(Reply.say("Hello from Azure."))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_testkit import ScriptedOpenAIServer

__all__ = ["ScriptedAzureOpenAIServer"]

_DEPLOYMENT = re.compile(r"^/openai/deployments/([^/]+)/chat/completions$")
_OPEN_ROUTES = ("/openai/v1/chat/completions", "/models/chat/completions")
_BAD_KEY = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
    "provide a valid key for an active subscription and use a correct regional API endpoint "
    "for your resource."
)


class ScriptedAzureOpenAIServer(ScriptedOpenAIServer):
    """Answers Azure's chat-completions routes with the kit's scripted replies."""

    base_path = ""
    api_key: str = "test-key"
    deployments: Mapping[str, str]
    """Deployment name to the model it serves."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deployments = {"test-model": "gpt-4o"}

    def answers(self, path: str) -> bool:
        route = urlsplit(path).path
        return bool(_DEPLOYMENT.match(route)) or route in _OPEN_ROUTES

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"code": str(status), "message": message}}

    def authentication_problem(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, str] | None:
        url = urlsplit(path)
        given = headers.get("api-key")
        if given is None and url.path.startswith("/openai/v1/"):
            given = headers.get("authorization", "").removeprefix("Bearer ")
        if given != self.api_key:
            return 401, _BAD_KEY
        version = parse_qs(url.query).get("api-version")
        if not version and not url.path.startswith("/openai/v1/"):
            return 404, "Resource not found"
        found = _DEPLOYMENT.match(url.path)
        if found and found.group(1) not in self.deployments:
            return 404, (
                "The API deployment for this resource does not exist. If you created the "
                "deployment within the last 5 minutes, please wait a moment and try again."
            )
        return None
