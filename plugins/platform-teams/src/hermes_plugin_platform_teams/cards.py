"""The Adaptive Cards an approval is asked and answered with.

Each button is an ``Action.Execute`` (Universal Actions, card version 1.5: the press comes
back as an ``adaptiveCard/action`` invoke, answered with the card that replaces it), with an
``Action.Submit`` fallback for clients without them (the press comes as a message whose
``value`` is the button's data). The data carries the question's text, so the card can be
closed by a gateway that restarted in between."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_sdk.platform import Choice, yes_and_no

__all__ = ["ANSWER", "answered_card", "question_card"]

ANSWER = "hermes_answer"
"""The verb of an answer's button, and the data key of its question's id."""
QUESTION_CHARS = 1000
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"


def question_card(question: str, choices: Sequence[Choice], request_id: str) -> dict[str, Any]:
    meaning = yes_and_no(choices)
    actions = []
    for choice in choices:
        data = {ANSWER: request_id, "choice": choice.value, "question": question[:QUESTION_CHARS]}
        action: dict[str, Any] = {
            "type": "Action.Execute",
            "title": choice.label,
            "verb": ANSWER,
            "data": data,
            "fallback": {"type": "Action.Submit", "title": choice.label, "data": data},
        }
        if meaning is not None:
            action["style"] = "destructive" if choice is meaning[1] else "positive"
        actions.append(action)
    words = ", ".join(choice.value for choice in choices)
    return {
        "type": "AdaptiveCard",
        "$schema": SCHEMA,
        "version": "1.5",
        "body": [
            {"type": "TextBlock", "text": question, "wrap": True},
            {
                "type": "TextBlock",
                "text": f"Press a button, or reply with one of: {words}",
                "wrap": True,
                "isSubtle": True,
                "size": "Small",
            },
        ],
        "actions": actions,
    }


def answered_card(question: str, outcome: str) -> dict[str, Any]:
    """The card once its question is answered: the question, who chose what, no buttons."""
    return {
        "type": "AdaptiveCard",
        "$schema": SCHEMA,
        "version": "1.5",
        "body": [
            {"type": "TextBlock", "text": question or "The question", "wrap": True},
            {"type": "TextBlock", "text": outcome, "wrap": True, "weight": "Bolder"},
        ],
    }
