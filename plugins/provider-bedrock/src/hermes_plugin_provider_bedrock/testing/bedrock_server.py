"""A scripted Bedrock runtime on loopback, over real HTTP: Converse and ConverseStream.

Written from the Bedrock runtime API reference (``Converse``, ``ConverseStream``, the
``ContentBlock``/``ToolUseBlock``/``ToolResultBlock``/``ReasoningContentBlock`` types),
AWS's Signature Version 4 reference and the event stream encoding, and checked by driving it
with boto3 unmodified (see the plugin's tests). The kit's :class:`~hermes_testkit.Reply`
objects are rendered as Converse responses; streamed, as AWS's binary event stream
(``messageStart``, ``contentBlockStart``/``Delta``/``Stop``, ``messageStop``,
``metadata``), each message framed with its prelude, headers and CRCs.

Every request's credentials are checked before anything else: a SigV4 signature is computed
again from the secret of the access key it names (:attr:`credentials`) and compared in
constant time, so a wrong secret is refused with AWS's own words (403,
``InvalidSignatureException``), as is an unknown access key, a stale date, or no
credentials at all; a Bedrock API key goes as a bearer token (:attr:`api_keys`). It also
refuses what the service refuses in a conversation: one that does not alternate roles or
start with the user, a blank text block, tool results that do not answer the tool uses
before them, and tool blocks without a ``toolConfig``.

    with ScriptedBedrockServer() as server:
        server.credentials = {"AKIDEXAMPLE": "secret"}
        server.queue(Reply.tool_call("get_weather", {"city": "Oslo"}), Reply.say("Sunny."))
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
import time
import zlib
from calendar import timegm
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from hermes_testkit._scripted import Reply, ScriptedServer, StreamEvent, pieces

__all__ = ["ScriptedBedrockServer", "conversation_problem", "frame"]

_ROUTE = re.compile(r"^/model/([^/]+)/(converse|converse-stream)$")
_ERROR_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    402: "AccessDeniedException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    413: "ValidationException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_STOP = {"length": "max_tokens", "content_filter": "content_filtered"}
_BAD_SIGNATURE = (
    "The request signature we calculated does not match the signature you provided. Check "
    "your AWS Secret Access Key and signing method. Consult the service documentation for "
    "details."
)
_SKEW_SECONDS = 300


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event stream message: prelude (total and header lengths, their CRC), string
    headers, the payload, and the CRC of all before it."""
    encoded = b"".join(
        struct.pack("B", len(name))
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


_START = (
    "A conversation must start with a user message. Try again with a conversation that "
    "starts with a user message."
)
_ALTERNATE = (
    "A conversation must alternate between user and assistant roles. Make sure the "
    "conversation alternates between user and assistant roles and try again."
)
_NO_TOOL_CONFIG = (
    "The toolConfig field must be defined when using toolUse and toolResult content blocks."
)


def conversation_problem(body: Any) -> str | None:
    """What Converse refuses in a request's messages, in the service's words."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return _START
    if messages[0].get("role") != "user":
        return _START
    uses: list[str] = []
    has_tools = bool((body.get("toolConfig") or {}).get("tools"))
    for number, message in enumerate(messages):
        if number and message.get("role") == messages[number - 1].get("role"):
            return _ALTERNATE
        blocks = message.get("content") or []
        for index, block in enumerate(blocks):
            if "text" in block and not str(block["text"]).strip():
                return (
                    f"The text field in the ContentBlock object at messages.{number}.content."
                    f"{index} is blank. Add text to the text field, and try again."
                )
            if ("toolUse" in block or "toolResult" in block) and not has_tools:
                return _NO_TOOL_CONFIG
        results = [b["toolResult"]["toolUseId"] for b in blocks if "toolResult" in b]
        if message.get("role") == "user":
            if len(results) > len(uses):
                return (
                    f"The number of toolResult blocks at messages.{number}.content exceeds the "
                    "number of toolUse blocks of previous turn."
                )
            missing = [use for use in uses if use not in results]
            if missing:
                return (
                    f"Expected toolResult blocks at messages.{number}.content for the "
                    f"following Ids: {', '.join(missing)}"
                )
        uses = [b["toolUse"]["toolUseId"] for b in blocks if "toolUse" in b]
    if uses:
        return (
            f"Expected toolResult blocks at messages.{len(messages)}.content for the "
            f"following Ids: {', '.join(uses)}"
        )
    return None


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


class ScriptedBedrockServer(ScriptedServer):
    """Answers ``POST /model/{modelId}/converse`` and ``/converse-stream``."""

    base_path = ""
    stream_content_type = "application/vnd.amazon.eventstream"
    credentials: Mapping[str, str]
    """Access key id to secret: the keys a SigV4 signature may be made with."""
    api_keys: frozenset[str] | None = None
    """Bedrock API keys accepted as bearer tokens; None accepts any."""

    def __init__(self, port: int = 0, default: Reply | None = None) -> None:
        super().__init__(port, default)
        self.credentials = {}
        self.signed: list[str] = []
        """The region of each verified SigV4 request, in order."""

    # --- the protocol -----------------------------------------------------------------------

    def answers(self, path: str) -> bool:
        return bool(_ROUTE.match(urlsplit(path).path))

    def wants_stream(self, path: str, body: Mapping[str, Any]) -> bool:
        return urlsplit(path).path.endswith("/converse-stream")

    def error_body(self, status: int, message: str) -> Any:
        return {"message": message}

    def error_headers(self, status: int, message: str) -> Mapping[str, str]:
        if "signature we calculated" in message:
            kind = "InvalidSignatureException"
        elif "security token" in message:
            kind = "UnrecognizedClientException"
        else:
            kind = _ERROR_TYPES.get(status, "InternalServerException")
        return {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"}

    def overflow_error(self, tokens: int) -> Any:
        return self.error_body(400, "Input is too long for requested model.")

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        text = json.dumps([body.get("system"), body.get("messages")], ensure_ascii=False)
        return max(1, len(text) // 4)

    def refusal(self, body: Any) -> tuple[int, str] | None:
        problem = conversation_problem(body)
        return None if problem is None else (400, problem)

    def encode_event(self, event: StreamEvent) -> bytes:
        name, data = event
        payload = (data if isinstance(data, str) else json.dumps(data)).encode()
        if name and name.startswith("exception:"):
            headers = {
                ":exception-type": name.removeprefix("exception:"),
                ":content-type": "application/json",
                ":message-type": "exception",
            }
        else:
            headers = {
                ":event-type": name or "",
                ":content-type": "application/json",
                ":message-type": "event",
            }
        return frame(headers, payload)

    def partial_event(self) -> bytes:
        whole = frame({":event-type": "contentBlockDelta"}, b'{"contentBlockIndex": 0}')
        return whole[: len(whole) // 2]

    def malformed_event(self) -> bytes:
        broken = bytearray(frame({":event-type": "messageStart"}, b'{"role": "assistant"}'))
        broken[9] ^= 0xFF  # the prelude's CRC no longer matches
        return bytes(broken)

    # --- credentials ------------------------------------------------------------------------

    def authentication_problem(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, str] | None:
        given = headers.get("authorization", "")
        if given.startswith("Bearer "):
            token = given.removeprefix("Bearer ")
            if self.api_keys is not None and token not in self.api_keys:
                return 403, "Authentication failed: Please make sure your API Key is valid."
            return None
        if not given.startswith("AWS4-HMAC-SHA256 "):
            return 403, "Missing Authentication Token"
        return self._signature_problem(method, path, headers, body, given)

    def _signature_problem(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes, given: str
    ) -> tuple[int, str] | None:
        try:
            fields = dict(
                part.strip().split("=", 1)
                for part in given.removeprefix("AWS4-HMAC-SHA256 ").split(",")
            )
            key_id, day, region, service, _ = fields["Credential"].split("/")
            signed = fields["SignedHeaders"].split(";")
            stamp = headers["x-amz-date"]
            when = timegm(time.strptime(stamp, "%Y%m%dT%H%M%SZ"))
        except (KeyError, ValueError):
            return (
                400,
                "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' "
                "parameters.",
            )
        secret = self.credentials.get(key_id)
        if secret is None:
            return 403, "The security token included in the request is invalid."
        if not stamp.startswith(day):
            return (
                403,
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of "
                f"date from HTTP: '{day}' != '{stamp[:8]}', from '{stamp}'.",
            )
        if abs(time.time() - when) > _SKEW_SECONDS:
            return 403, f"Signature expired: {stamp} is now earlier than the allowed window."
        digest = hashlib.sha256(body).hexdigest()
        stated = headers.get("x-amz-content-sha256")
        if stated is not None and stated != digest:  # the body is signed through its hash
            return (
                400,
                "The provided 'x-amz-content-sha256' header does not match what was computed.",
            )
        url = urlsplit(path)
        canonical_query = "&".join(
            sorted(
                f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}"
                for name, value in parse_qsl(url.query, keep_blank_values=True)
            )
        )
        canonical_headers = "".join(
            f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed
        )
        canonical = "\n".join(
            [
                method,
                quote(url.path, safe="/~"),  # each segment encoded again, as AWS does
                canonical_query,
                canonical_headers,
                ";".join(signed),
                digest,
            ]
        )
        scope = f"{day}/{region}/{service}/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        key = _hmac(f"AWS4{secret}".encode(), day)
        for part in (region, service, "aws4_request"):
            key = _hmac(key, part)
        expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, fields.get("Signature", "")):
            return 403, _BAD_SIGNATURE
        if service != "bedrock" or "host" not in signed:
            return 403, "Credential should be scoped to correct service: 'bedrock'."
        self.signed.append(region)
        return None

    # --- rendering --------------------------------------------------------------------------

    def _usage(self, reply: Reply, request: Mapping[str, Any]) -> dict[str, int]:
        given = dict(reply.usage)
        inputs = given.get("input_tokens", given.get("prompt_tokens", self.prompt_tokens(request)))
        outputs = given.get("output_tokens", given.get("completion_tokens", 5))
        usage = {"inputTokens": inputs, "outputTokens": outputs, "totalTokens": inputs + outputs}
        if given.get("cached_tokens"):
            usage["cacheReadInputTokens"] = given["cached_tokens"]
        return usage

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.thinking:
            said = {"text": reply.thinking, "signature": f"sig-{len(reply.thinking)}"}
            blocks.append({"reasoningContent": {"reasoningText": said}})
        if reply.text:
            blocks.append({"text": reply.text})
        blocks.extend(
            {
                "toolUse": {
                    "toolUseId": f"tooluse_kit{number}",
                    "name": name,
                    "input": json.loads(raw),
                }
            }
            for number, (name, raw) in enumerate(reply.tool_calls)
        )
        return blocks

    def _stop(self, reply: Reply) -> str:
        if reply.tool_calls:
            return "tool_use"
        return _STOP.get(reply.finish_reason or "", "end_turn")

    def render_complete(self, reply: Reply, request: Mapping[str, Any]) -> Any:
        return {
            "output": {"message": {"role": "assistant", "content": self._blocks(reply)}},
            "stopReason": self._stop(reply),
            "usage": self._usage(reply, request),
            "metrics": {"latencyMs": 1},
        }

    def render_stream(self, reply: Reply, request: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = [("messageStart", {"role": "assistant"})]
        size = reply.chunk_size
        for index, block in enumerate(self._blocks(reply)):

            def delta(change: dict[str, Any], index: int = index) -> None:
                events.append(("contentBlockDelta", {"contentBlockIndex": index, "delta": change}))

            if "reasoningContent" in block:
                said = block["reasoningContent"]["reasoningText"]
                for piece in pieces(said["text"], size):
                    delta({"reasoningContent": {"text": piece}})
                delta({"reasoningContent": {"signature": said["signature"]}})
            elif "text" in block:
                for piece in pieces(block["text"], size):
                    delta({"text": piece})
            else:
                use = block["toolUse"]
                start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
                events.append(("contentBlockStart", {"contentBlockIndex": index, "start": start}))
                for piece in pieces(json.dumps(use["input"]), size):
                    delta({"toolUse": {"input": piece}})
            events.append(("contentBlockStop", {"contentBlockIndex": index}))
        events.append(("messageStop", {"stopReason": self._stop(reply)}))
        events.append(
            ("metadata", {"usage": self._usage(reply, request), "metrics": {"latencyMs": 1}})
        )
        return events
