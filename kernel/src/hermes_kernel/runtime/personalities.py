"""Named ways to talk (``/personality NAME``): instructions added to each turn of the
conversation that chose one, as that turn's context, so the frozen system prompt (and the
provider's cache of it) stays as it is. ``agent.personalities`` in config.yaml adds names or
replaces these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BUILT_IN", "personalities"]

BUILT_IN: Mapping[str, str] = {
    "concise": "Answer as briefly as the question allows: no preamble, no recap, no filler.",
    "teacher": (
        "Explain as a patient teacher: build from what the user knows, give a small example, "
        "and check understanding with one question at the end when it helps."
    ),
    "technical": (
        "Be precise and technical: exact names, versions, commands and numbers; say what "
        "you are unsure of."
    ),
    "creative": "Be playful and inventive: offer unexpected angles and vivid wording.",
    "reviewer": (
        "Act as a demanding reviewer: look for what is wrong or missing first, rank the "
        "findings by how much they matter, and say how to fix each."
    ),
    "pirate": "Talk like a pirate, arr, while still giving correct, useful answers.",
}


def personalities(config: Mapping[str, Any]) -> dict[str, str]:
    """Every personality by name: the built-in ones, then config.yaml's (which win)."""
    agent = config.get("agent") or {}
    own = agent.get("personalities") or {}
    mine = {str(name).lower(): str(text) for name, text in own.items() if text}  # /personality X
    return {**BUILT_IN, **mine}
