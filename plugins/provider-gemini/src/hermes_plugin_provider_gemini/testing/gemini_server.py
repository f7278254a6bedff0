"""A scripted Gemini server on loopback, over real HTTP: the Gemini API and Vertex AI.

Written from Google's API reference (``models.generateContent``,
``models.streamGenerateContent``, the ``Content``/``Part``/``FunctionCall``/
``FunctionResponse``/``UsageMetadata`` types) and the official ``google-genai`` client's
source; the client talks to it unmodified (see the plugin's tests). The kit's
:class:`~hermes_testkit.Reply` objects are rendered as ``GenerateContentResponse`` objects:
thoughts as ``thought: true`` parts, tool calls as ``functionCall`` parts (signed with a
``thoughtSignature`` on thinking models), streamed as server-sent events (``?alt=sse``),
one response per chunk, the last with the finish reason and ``usageMetadata``.

It says no as the service does: a key that is not the server's (400, "API key not valid",
as the Gemini API says it), a Vertex request without the bearer token its sign-in gave
(401), function responses that do not answer the call turn before them one for one, a
Gemini 3 call sent back without its signature, an empty text part, and a prompt over the
model's window in the service's words. For Vertex it also serves the OAuth token endpoint a
service account signs in at (``service_account_file`` writes such a key): the JWT assertion's
signature, issuer, audience and expiry are checked, and :meth:`revoke` makes Google refuse
the key from then on.

    with ScriptedGeminiServer() as server:
        server.queue(Reply.tool_call("get_weather", {"city": "Oslo"}), Reply.say("Sunny."))
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_testkit._scripted import Reply, ScriptedServer, StreamEvent, pieces

__all__ = ["ScriptedGeminiServer", "contents_problem"]

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    402: "FAILED_PRECONDITION",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_FINISH = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}
_SIGNS = re.compile(r"^gemini-(2\.5|[3-9])", re.IGNORECASE)
_NEEDS_SIGNATURE = re.compile(r"^gemini-[3-9]", re.IGNORECASE)
_GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
"""The audience a service account's assertion names, wherever its token_uri points."""
_MODEL = re.compile(r"/models/([^/:]+):")


def _model_of(path: str) -> str:
    found = _MODEL.search(urlsplit(path).path)
    return found.group(1) if found else "gemini-test"


def contents_problem(body: Any, model: str) -> str | None:
    """What the service refuses in a request's ``contents``, in its words."""
    turns = body.get("contents") if isinstance(body, dict) else None
    if not isinstance(turns, list) or not turns:
        return "* GenerateContentRequest.contents: contents is not specified"
    calls_before = 0
    for number, turn in enumerate(turns):
        parts = turn.get("parts") if isinstance(turn, dict) else None
        if not parts:
            return (
                f"* GenerateContentRequest.contents[{number}].parts: contents.parts must not "
                "be empty."
            )
        calls = [part for part in parts if "functionCall" in part]
        answers = [part for part in parts if "functionResponse" in part]
        if any(part.get("text") == "" for part in parts):
            return (
                "Unable to submit request because it has an empty text parameter. Add a value "
                "to the parameter and try again."
            )
        if answers:
            if not calls_before:
                return (
                    "Please ensure that function response turn comes immediately after a "
                    "function call turn."
                )
            if len(answers) != calls_before:
                return (
                    "Please ensure that the number of function response parts is equal to the "
                    "number of function call parts of the function call turn."
                )
        if calls and _NEEDS_SIGNATURE.match(model) and not calls[0].get("thoughtSignature"):
            return (
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead "
                "to degraded model performance. Additional data, function call "
                f"`default_api:{calls[0]['functionCall'].get('name')}` , position {number + 1}."
            )
        calls_before = len(calls) if turn.get("role") == "model" else 0
    return None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ScriptedGeminiServer(ScriptedServer):
    """Answers ``POST .../models/{model}:generateContent`` and ``:streamGenerateContent``
    (``?alt=sse``), below ``/v1beta`` (the Gemini API) or ``/v1/projects/P/locations/L/
    publishers/google`` (Vertex AI)."""

    base_path = "/v1beta"
    api_key: str | None = None
    """When set, the only key the Gemini API path accepts."""

    def __init__(self, port: int = 0, default: Reply | None = None) -> None:
        super().__init__(port, default)
        self._private_key: Any = None
        self._email = "hermes-test@kit-project.iam.gserviceaccount.com"
        self._tokens: set[str] = set()
        self._revoked = False
        self.sign_ins = 0

    @property
    def vertex_url(self) -> str:
        """The regional endpoint a Vertex provider is given (its paths name the project)."""
        return f"http://127.0.0.1:{self.port}"

    # --- the protocol -----------------------------------------------------------------------

    def answers(self, path: str) -> bool:
        route = urlsplit(path).path
        return route.endswith((":generateContent", ":streamGenerateContent"))

    def wants_stream(self, path: str, body: Mapping[str, Any]) -> bool:
        return urlsplit(path).path.endswith(":streamGenerateContent")

    def error_body(self, status: int, message: str) -> Any:
        return {
            "error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}
        }

    def overflow_error(self, tokens: int) -> Any:
        return self.error_body(
            400,
            f"The input token count ({tokens}) exceeds the maximum number of tokens allowed "
            f"({self.context_window}).",
        )

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        text = json.dumps([body.get("systemInstruction"), body.get("contents")], ensure_ascii=False)
        return max(1, len(text) // 4)

    def authentication_problem(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, str] | None:
        if "/projects/" in path and self._private_key is not None:
            bearer = headers.get("authorization", "").removeprefix("Bearer ")
            if bearer not in self._tokens or self._revoked:
                return 401, (
                    "Request had invalid authentication credentials. Expected OAuth 2 access "
                    "token, login cookie or other valid authentication credential."
                )
            return None
        if self.api_key is not None:
            given = (
                headers.get("x-goog-api-key") or parse_qs(urlsplit(path).query).get("key", [""])[0]
            )
            if given != self.api_key:
                return 400, "API key not valid. Please pass a valid API key."
        return None

    def refusal(self, body: Any) -> tuple[int, str] | None:
        problem = contents_problem(body, self._current_model)
        return None if problem is None else (400, problem)

    _current_model = "gemini-test"

    def _record(self, request: Any) -> None:
        self._current_model = _model_of(request.path)  # refusals depend on the model
        super()._record(request)

    # --- the service account's sign-in -----------------------------------------------------

    def service_account_file(self, folder: Path) -> Path:
        """A service account's JSON key whose ``token_uri`` is this server."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        self._private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = self._private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        key = {
            "type": "service_account",
            "project_id": "kit-project",
            "private_key_id": secrets.token_hex(20),
            "private_key": pem,
            "client_email": self._email,
            "client_id": "100000000000000000001",
            "token_uri": f"http://127.0.0.1:{self.port}/token",
        }
        path = folder / "service-account.json"
        path.write_text(json.dumps(key))
        return path

    def expire_tokens(self) -> None:
        """Every access token given so far stops working (a new sign-in gets a good one)."""
        self._tokens.clear()

    def revoke(self) -> None:
        """Google refuses the key from now on, and the tokens it gave stop working."""
        self._revoked = True

    def serve_other(
        self, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Any] | None:
        if urlsplit(path).path != "/token":
            return None
        form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        problem = self._assertion_problem(form)
        if problem is not None:
            return 400, {"error": "invalid_grant", "error_description": problem}
        token = f"ya29.kit-{secrets.token_urlsafe(12)}"
        self._tokens.add(token)
        self.sign_ins += 1
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}

    def _assertion_problem(self, form: Mapping[str, str]) -> str | None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return "Invalid grant_type."
        if self._private_key is None or self._revoked:
            return "Invalid JWT Signature."
        try:
            header, claims, signature = form["assertion"].split(".")
            self._private_key.public_key().verify(
                _unb64url(signature),
                f"{header}.{claims}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
            said = json.loads(_unb64url(claims))
        except (KeyError, ValueError, InvalidSignature):
            return "Invalid JWT Signature."
        now = time.time()
        if said.get("iss") != self._email:
            return "Invalid JWT: the issuer is not the service account."
        if said.get("aud") != _GOOGLE_TOKEN_AUDIENCE:
            return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe."
        if not said.get("iat", 0) - 300 <= now <= said.get("exp", 0):
            return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe."
        if "cloud-platform" not in str(said.get("scope")):
            return "Invalid OAuth scope or ID token audience provided."
        return None

    # --- rendering --------------------------------------------------------------------------

    def _usage(self, reply: Reply, request: Mapping[str, Any]) -> dict[str, Any]:
        given = dict(reply.usage)
        prompt = given.get("input_tokens", given.get("prompt_tokens", self.prompt_tokens(request)))
        output = given.get("output_tokens", given.get("completion_tokens", 5))
        thoughts = given.get("reasoning_tokens", 0)
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output + thoughts,
        }
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        if given.get("cached_tokens"):
            usage["cachedContentTokenCount"] = given["cached_tokens"]
        return usage

    def _parts(self, reply: Reply) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if reply.thinking:
            parts.append({"text": reply.thinking, "thought": True})
        if reply.text:
            parts.append({"text": reply.text})
        for number, (name, arguments) in enumerate(reply.tool_calls):
            part: dict[str, Any] = {"functionCall": {"name": name, "args": json.loads(arguments)}}
            if number == 0 and _SIGNS.match(self._current_model):
                part["thoughtSignature"] = _b64url(f"sig-{name}".encode())
            parts.append(part)
        return parts

    def _response(
        self, reply: Reply, request: Mapping[str, Any], parts: list[dict[str, Any]], last: bool
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        answer: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": self._current_model,
            "responseId": "kit-response",
        }
        if last:
            candidate["finishReason"] = _FINISH.get(reply.finish_reason or "", "STOP")
            answer["usageMetadata"] = self._usage(reply, request)
        return answer

    def render_complete(self, reply: Reply, request: Mapping[str, Any]) -> Any:
        return self._response(reply, request, self._parts(reply), last=True)

    def render_stream(self, reply: Reply, request: Mapping[str, Any]) -> list[StreamEvent]:
        chunks: list[list[dict[str, Any]]] = []
        for part in self._parts(reply):
            if "text" in part:
                chunks.extend(
                    [{**part, "text": piece}] for piece in pieces(part["text"], reply.chunk_size)
                )
            else:
                chunks.append([part])
        if not chunks:
            chunks.append([{"text": ""}])
        last = len(chunks) - 1
        return [
            (None, self._response(reply, request, parts, last=number == last))
            for number, parts in enumerate(chunks)
        ]
