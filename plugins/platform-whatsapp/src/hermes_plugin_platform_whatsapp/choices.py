"""A question's choices as WhatsApp's own controls: up to three reply buttons (a title holds
20 characters), up to ten list rows (24, with a 72-character description), each numbered
so its title is never mistaken for another's; the body lists each choice's word and what it
means, since a typed answer is the word (the gateway takes it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_sdk.platform import Choice

__all__ = ["buttons_for", "listed"]

MAX_BUTTONS = 3
MAX_ROWS = 10
BUTTON_TITLE = 20
ROW_TITLE = 24
ROW_DESCRIPTION = 72
LIST_BUTTON = "Choose"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def listed(choices: Sequence[Choice]) -> str:
    """Each choice's word (what to type) and what it means."""
    return "\n".join(f"{choice.value} - {choice.label}" for choice in choices)


def buttons_for(choices: Sequence[Choice], request_id: str) -> Any:
    """pywa's buttons (or list) for ``choices``, each answering ``REQUEST:VALUE``; None when
    there are more than a list holds (they are typed then)."""
    from pywa.types.callback import Button, Section, SectionList, SectionRow

    if len(choices) <= MAX_BUTTONS:
        return [
            Button(
                title=_short(f"{n}. {c.label}", BUTTON_TITLE),
                callback_data=f"{request_id}:{c.value}",
            )
            for n, c in enumerate(choices, 1)
        ]
    if len(choices) <= MAX_ROWS:
        rows = [
            SectionRow(
                title=_short(f"{n}. {c.label}", ROW_TITLE),
                callback_data=f"{request_id}:{c.value}",
                description=_short(c.label, ROW_DESCRIPTION)
                if len(c.label) > ROW_TITLE - 4
                else None,
            )
            for n, c in enumerate(choices, 1)
        ]
        return SectionList(button_title=LIST_BUTTON, sections=[Section(title="Choices", rows=rows)])
    return None
