"""Gemini's ``generateContent`` wire format, shared by the Gemini API and Vertex AI.

A conversation is ``contents`` of ``user`` and ``model`` turns made of ``parts``; the system
messages become ``systemInstruction``. A tool call is a ``functionCall`` part (arguments as
an object, not a JSON string), answered in the next user turn by a ``functionResponse`` part
with the same name, all of a step's answers in one turn, as the API requires. Gemini 3
models sign the first call of each step (``thoughtSignature``) and refuse the next request
unless the signature comes back on that part: it is kept on the assistant message's
``reasoning_details`` and sent back where it came from. Thought summaries (``thought: true``
parts) become the reply's reasoning text and are never sent back.

Tool parameters go as ``parametersJsonSchema`` (the full JSON Schema an MCP server writes),
not the OpenAPI subset ``parameters`` takes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from hermes_commons.reasoning import effort_of
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ProviderError,
    ToolCallRequest,
)

THINKING_BUDGETS = {
    "none": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
}
"""``model.reasoning_effort`` as Gemini 2.5's ``thinkingBudget`` in tokens."""
_LEAST_BUDGET_PRO = 128
"""Gemini 2.5 Pro cannot stop thinking: its least budget."""
_MOST_BUDGET_FLASH = 24576
"""The most 2.5 Flash and Flash-Lite think (Pro: 32,768)."""
_THINKING_MODELS = re.compile(r"^gemini-(2\.5|[3-9])", re.IGNORECASE)
"""The Gemini models that think (and take ``thinkingConfig``); an older one refuses it."""
_LEVELS = re.compile(r"^gemini-[3-9]", re.IGNORECASE)
"""Models that take a ``thinkingLevel`` rather than a budget."""
_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_SIGNATURE = "thought_signature"
"""The ``reasoning_details`` entries this transport writes (and the only ones it reads)."""


def _bare(model: str) -> str:
    """``publishers/google/models/gemini-2.5-pro`` and ``models/gemini-2.5-pro`` alike."""
    return model.rsplit("/", 1)[-1]


def thinks(model: str, options: Mapping[str, Any]) -> bool:
    said = options.get("thinking")
    return bool(said) if said is not None else bool(_THINKING_MODELS.match(_bare(model)))


def thinking_config(model: str, effort: str | None) -> dict[str, Any]:
    """``generationConfig.thinkingConfig`` for a thinking model: thought summaries asked
    for, and the effort as a level (Gemini 3) or a budget (2.5)."""
    config: dict[str, Any] = {"includeThoughts": effort != "none"}
    if effort is None:
        return config
    if _LEVELS.match(_bare(model)):
        config["thinkingLevel"] = "low" if effort in ("none", "minimal", "low") else "high"
    else:
        budget = THINKING_BUDGETS[effort]
        if "pro" in _bare(model).lower():
            budget = max(budget, _LEAST_BUDGET_PRO)
        else:
            budget = min(budget, _MOST_BUDGET_FLASH)
        config["thinkingBudget"] = budget
    return config


def _user_parts(message: ChatMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"text": message.content})
    parts.extend(
        {"inlineData": {"mimeType": image.mime, "data": image.base64()}} for image in message.images
    )
    return parts or [{"text": " "}]  # a turn needs a part; an empty text part is refused


def _signatures(message: ChatMessage) -> dict[str, str]:
    """This transport's signatures on an assistant message: by call id, and ``""`` for the
    text part."""
    return {
        str(detail.get("call_id") or ""): str(detail["signature"])
        for detail in message.reasoning_details
        if detail.get("type") == _SIGNATURE and detail.get("signature")
    }


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        return {"arguments": raw}  # sent back as the model wrote it, never dropped
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _model_parts(message: ChatMessage) -> list[dict[str, Any]]:
    signatures = _signatures(message)
    parts: list[dict[str, Any]] = []
    if message.content:
        text: dict[str, Any] = {"text": message.content}
        if "" in signatures:
            text["thoughtSignature"] = signatures[""]
        parts.append(text)
    for call in message.tool_calls:
        part: dict[str, Any] = {
            "functionCall": {"name": call.name, "args": _arguments(call.arguments)}
        }
        if call.id in signatures:
            part["thoughtSignature"] = signatures[call.id]
        parts.append(part)
    return parts or [{"text": " "}]


def _result(content: str) -> dict[str, Any]:
    """A tool's output as ``functionResponse.response`` (an object): JSON objects as they
    are, anything else under ``result``."""
    if content.startswith("{"):
        try:
            parsed = orjson.loads(content)
        except orjson.JSONDecodeError:
            pass
        else:
            if isinstance(parsed, dict):
                return parsed
    return {"result": content or "(no output)"}


def contents(messages: Sequence[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The system instruction and the ``contents`` of a conversation. Adjacent turns of one
    role are joined: a step's tool results must arrive as one turn."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    names: dict[str, str] = {}
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            role, parts = "model", _model_parts(message)
            names.update((call.id, call.name) for call in message.tool_calls)
        elif message.role == "tool":
            name = message.name or names.get(message.tool_call_id or "", "tool")
            response = {"name": name, "response": _result(message.content)}
            role, parts = "user", [{"functionResponse": response}]
        else:
            role, parts = "user", _user_parts(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["parts"].extend(parts)
        else:
            turns.append({"role": role, "parts": parts})
    return system, turns


def _tool_config(choice: str | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    if choice in modes:
        return {"functionCallingConfig": {"mode": modes[choice]}}
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


def _safety(options: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """``options.safety_settings``: a mapping of category to threshold (or the API's own
    list), with the ``HARM_CATEGORY_`` and ``BLOCK_`` prefixes optional."""
    given = options.get("safety_settings")
    if not given:
        return None
    pairs = (
        given.items()
        if isinstance(given, Mapping)
        else ((item.get("category"), item.get("threshold")) for item in given)
    )
    return [
        {"category": _category(str(category)), "threshold": _threshold(str(threshold))}
        for category, threshold in pairs
    ]


def _category(name: str) -> str:
    name = name.upper()
    return name if name.startswith("HARM_CATEGORY_") else f"HARM_CATEGORY_{name}"


def _threshold(name: str) -> str:
    name = name.upper()
    if name in ("OFF", "BLOCK_NONE") or name.startswith("BLOCK_"):
        return name
    return "BLOCK_NONE" if name == "NONE" else f"BLOCK_{name}"


def payload(request: ModelRequest, options: Mapping[str, Any]) -> dict[str, Any]:
    system, turns = contents(request.messages)
    body: dict[str, Any] = {"contents": turns}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parametersJsonSchema": dict(tool.parameters),
                    }
                    for tool in request.tools
                ]
            }
        ]
        tool_config = _tool_config(request.tool_choice)
        if tool_config:
            body["toolConfig"] = tool_config
    generation: dict[str, Any] = {}
    if request.temperature is not None:
        generation["temperature"] = request.temperature
    if request.max_tokens is not None:
        generation["maxOutputTokens"] = request.max_tokens
    effort = effort_of(request, options)
    if thinks(request.model, options):
        generation["thinkingConfig"] = thinking_config(request.model, effort)
    if generation:
        body["generationConfig"] = generation
    safety = _safety(options)
    if safety:
        body["safetySettings"] = safety
    return body


def usage_of(raw: Any) -> ModelUsage:
    if not isinstance(raw, dict):
        return ModelUsage()
    cached = int(raw.get("cachedContentTokenCount") or 0)
    thoughts = int(raw.get("thoughtsTokenCount") or 0)
    return ModelUsage(  # the prompt count holds the cached tokens: reported apart
        input_tokens=max(0, int(raw.get("promptTokenCount") or 0) - cached),
        output_tokens=int(raw.get("candidatesTokenCount") or 0) + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


class Reading:
    """A reply read from one ``GenerateContentResponse`` or assembled from a stream of them
    (each chunk carries new parts; the last, the finish reason and the usage)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[ToolCallRequest] = []
        self.details: list[dict[str, Any]] = []
        self.finish: str | None = None
        self.usage: Any = None
        self.blocked: str | None = None

    def add(self, chunk: Mapping[str, Any]) -> list[str]:
        """Read one chunk; the answer's new text, in order."""
        if chunk.get("usageMetadata"):
            self.usage = chunk["usageMetadata"]
        feedback = chunk.get("promptFeedback") or {}
        if feedback.get("blockReason"):
            self.blocked = str(feedback["blockReason"])
        said: list[str] = []
        for candidate in (chunk.get("candidates") or ())[:1]:
            for part in (candidate.get("content") or {}).get("parts") or ():
                said.extend(self._part(part))
            if candidate.get("finishReason"):
                self.finish = str(candidate["finishReason"])
        return said

    def _part(self, part: Mapping[str, Any]) -> list[str]:
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            call = part["functionCall"]
            call_id = str(call.get("id") or f"call_{len(self.calls)}")
            arguments = orjson.dumps(call.get("args") or {}).decode()
            self.calls.append(ToolCallRequest(call_id, str(call["name"]), arguments))
            if signature:
                self.details.append(
                    {"type": _SIGNATURE, "call_id": call_id, "signature": signature}
                )
            return []
        text = part.get("text")
        if not isinstance(text, str):
            return []
        if part.get("thought"):
            self.thoughts.append(text)
            return []
        if signature:  # on the answer's text: kept, so the next request can send it back
            self.details.append({"type": _SIGNATURE, "call_id": "", "signature": signature})
        self.text.append(text)
        return [text] if text else []

    def response(self, where: str) -> ModelResponse:
        if self.blocked and not (self.text or self.calls):
            raise ProviderError(
                ErrorKind.CONTENT_POLICY,
                f"{where} blocked the prompt ({self.blocked}); rephrase it, or loosen "
                "providers.NAME.options.safety_settings",
            )
        if self.finish == "MALFORMED_FUNCTION_CALL":
            raise ProviderError(
                ErrorKind.BAD_RESPONSE,
                f"{where}: the model wrote a function call that could not be parsed",
            )
        if self.calls:
            finish = "tool_calls"
        elif self.finish == "MAX_TOKENS":
            finish = "length"
        elif self.finish in _FILTERED:
            finish = "content_filter"
        else:
            finish = "stop"
        return ModelResponse(
            content="".join(self.text),
            tool_calls=tuple(self.calls),
            finish_reason=finish,
            usage=usage_of(self.usage),
            reasoning="".join(self.thoughts) or None,
            reasoning_details=tuple(self.details),
        )
