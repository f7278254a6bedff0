"""``/moa [@NAME] TEXT``: one message through a mixture, then the session's own model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_sdk.events import SlashContext
from hermes_sdk.slash import SlashReply

__all__ = ["mixtures", "one_turn"]

USAGE = (
    "usage: /moa [@NAME] TEXT: send one message through a mixture of agents (an endpoint "
    "of providers: with transport: moa), then go back to this model"
)


def mixtures(config: Mapping[str, Any]) -> list[str]:
    """The mixtures configured, in config order."""
    entries = config.get("providers") or {}
    return [
        name
        for name, entry in entries.items()
        if isinstance(entry, Mapping) and entry.get("transport") == "moa"
    ]


def one_turn(args: str, context: SlashContext) -> SlashReply | str:
    text = args.strip()
    configured = mixtures(context.config)
    name = configured[0] if configured else None
    if text.startswith("@"):
        name, _, text = text[1:].partition(" ")
        text = text.strip()
        if name not in configured:
            known = ", ".join(configured) or "none is configured"
            return f"no mixture {name!r} in providers: ({known})"
    if not text:
        return USAGE
    if name is None:
        return (
            "no mixture is configured: add a providers: entry with transport: moa, "
            "reference_models and an aggregator (see docs/user/models.md)"
        )
    return SlashReply(
        text=f"this message goes through the mixture {name}; then back to {context.model}",
        send=text,
        turn_provider=name,
    )
