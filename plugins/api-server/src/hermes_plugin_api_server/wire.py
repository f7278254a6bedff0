"""The OpenAI chat-completions wire format, as the official clients parse it: completion
objects, stream chunks, errors and the model list."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_sdk.runtime import ModelChoice, TurnEnded

__all__ = [
    "AGENT_MODEL",
    "chunk",
    "completion",
    "error_body",
    "model_list",
    "new_completion_id",
    "sse",
    "user_images",
    "user_input",
]

AGENT_MODEL = "hermes"
"""The agent as a model: the configured model, with Hermes's tools, memory and skills."""
FINISH = {"done": "stop", "budget": "length", "loop": "stop"}


def new_completion_id() -> str:
    return f"chatcmpl-{secrets.token_hex(12)}"


def error_body(message: str, kind: str, code: str | None = None, param: str | None = None) -> Any:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def model_list(choices: Sequence[ModelChoice], created: int) -> Any:
    names = [AGENT_MODEL, *(f"{AGENT_MODEL}/{c.provider}/{c.model}" for c in choices)]
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": created, "owned_by": "hermes"}
            for name in names
        ],
    }


def _text(content: Any) -> str:
    """A message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


def user_images(messages: Any) -> list[str]:
    """The URLs of the last user message's ``image_url`` parts (``data:`` or http(s)), in
    order: the part's ``image_url.url``, or ``image_url`` itself when a client sends a bare
    string."""
    if not isinstance(messages, list):
        return []
    for item in reversed(messages):
        if isinstance(item, Mapping) and item.get("role") == "user":
            content = item.get("content")
            if not isinstance(content, list):
                return []
            urls = []
            for part in content:
                if not isinstance(part, Mapping) or part.get("type") != "image_url":
                    continue
                image = part.get("image_url")
                url = image.get("url") if isinstance(image, Mapping) else image
                if not isinstance(url, str) or not url:
                    raise ValueError("an image_url part has no url")
                urls.append(url)
            return urls
    return []


def user_input(messages: Any, new_session: bool, *, with_images: bool = False) -> str:
    """The turn's user message: the last user message. A new session also gets what came
    before it (the client's instructions and the earlier exchange), since clients that keep
    no session send the whole conversation every time. Raises ValueError (a 400)."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    last_user = None
    for index in range(len(messages) - 1, -1, -1):
        item = messages[index]
        if isinstance(item, Mapping) and item.get("role") == "user":
            last_user = index
            break
    if last_user is None:
        raise ValueError("messages has no user message: the last one is the turn's input")
    text = _text(messages[last_user].get("content")).strip()
    if not text and not with_images:
        raise ValueError("the last user message has no text")
    if not new_session:
        return text
    earlier = []
    for item in messages[:last_user]:
        if not isinstance(item, Mapping):
            continue
        role, said = str(item.get("role", "")), _text(item.get("content")).strip()
        if said and role in {"system", "developer"}:
            earlier.append(f"[instructions from the client]\n{said}")
        elif said and role in {"user", "assistant"}:
            earlier.append(f"[{role}]\n{said}")
    if not earlier:
        return text
    context = "\n\n".join(earlier)
    return f"<earlier-conversation>\n{context}\n</earlier-conversation>\n\n{text}"


def _usage(ended: TurnEnded) -> dict[str, int]:
    usage = ended.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _reply_text(ended: TurnEnded) -> str:
    if ended.status == "done":
        return ended.reply
    note = f"[{ended.status}: {ended.error}]" if ended.error else f"[{ended.status}]"
    return f"{ended.reply}\n\n{note}" if ended.reply else note


def completion(
    completion_id: str, model: str, ended: TurnEnded, extension: Mapping[str, Any]
) -> Any:
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": _reply_text(ended)},
                "finish_reason": FINISH.get(ended.status, "stop"),
                "logprobs": None,
            }
        ],
        "usage": _usage(ended),
        "hermes": dict(extension),
    }


def chunk(
    completion_id: str,
    model: str,
    created: int,
    *,
    delta: Mapping[str, Any] | None = None,
    finish: TurnEnded | None = None,
    usage: TurnEnded | None = None,
    extension: Mapping[str, Any] | None = None,
) -> Any:
    """One ``chat.completion.chunk``: a delta, the finish, or (choices empty) the usage."""
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
    }
    if usage is not None:
        body["usage"] = _usage(usage)
    else:
        body["choices"] = [
            {
                "index": 0,
                "delta": dict(delta or {}),
                "finish_reason": FINISH.get(finish.status, "stop") if finish else None,
                "logprobs": None,
            }
        ]
    if extension:
        body["hermes"] = dict(extension)
    return body


def sse(data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n".encode()
