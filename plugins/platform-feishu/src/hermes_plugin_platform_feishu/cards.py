"""The interactive cards Hermes sends (card JSON 2.0): a reply's Markdown, which can be
updated in place for as long as it streams (``update_multi``: every viewer sees the update);
a question with a button per choice; and the card its answer leaves. Content goes out as
JSON text, as the message API takes it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hermes_plugin_platform_feishu.reading import ANSWER
from hermes_sdk.platform import ChatRef, Choice, yes_and_no

__all__ = ["answered_card", "question_card", "reply_card"]

_AT = re.compile(r"<(at\b)", re.IGNORECASE)


def _markdown(text: str) -> dict[str, Any]:
    # A model's <at id=all></at> would notify the whole group: shown, not sent as one.
    return {"tag": "markdown", "content": _AT.sub("<\u200b\\1", text)}


def _card(elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "width_mode": "fill"},
        "body": {"elements": elements},
    }


def reply_card(text: str) -> str:
    return json.dumps(_card([_markdown(text)]), ensure_ascii=False)


def question_card(chat: ChatRef, text: str, choices: Sequence[Choice], request_id: str) -> str:
    """``text`` (the question and the choices to type) and a button per choice; a press
    comes back with the request, the choice and where the card was."""
    meaning = yes_and_no(choices)
    buttons = []
    for choice in choices:
        value = {
            ANSWER: "1",
            "request": request_id,
            "choice": choice.value,
            "private": "1" if chat.chat_type == "private" else "0",
            "thread": chat.thread_id or "",
        }
        primary = meaning is not None and choice is meaning[0]
        buttons.append(
            {
                "tag": "button",
                "text": {"tag": "plain_text", "content": choice.label},
                "type": "primary_filled" if primary else "default",
                "behaviors": [{"type": "callback", "value": value}],
            }
        )
    return json.dumps(_card([_markdown(text), *buttons]), ensure_ascii=False)


def answered_card(asked: str, outcome: str) -> dict[str, Any]:
    """The card a question leaves once answered (the raw card a callback answers with)."""
    return _card([_markdown(asked), _markdown(f"**{outcome}**")])
