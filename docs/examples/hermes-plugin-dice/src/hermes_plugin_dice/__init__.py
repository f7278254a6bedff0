"""hermes-plugin-dice: Roll dice for board games: a tool the model can call."""

from __future__ import annotations

import random
from collections.abc import Iterator

from hermes_sdk import ToolSpec, hookimpl


def roll_dice(sides: int = 6, count: int = 1) -> str:
    """Roll ``count`` dice with ``sides`` sides each; the model reads the text returned."""
    if not 1 <= count <= 100 or not 1 <= sides <= 1000:
        raise ValueError("roll 1 to 100 dice of 1 to 1000 sides")  # the model sees this
    rolls = [random.randint(1, sides) for _ in range(count)]
    return f"rolled {count}d{sides}: {', '.join(map(str, rolls))} (total {sum(rolls)})"


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="roll_dice",
        description="Roll dice. Use it whenever the user asks for a random roll or a dice game.",
        handler=roll_dice,
        parameters={
            "type": "object",
            "properties": {
                "sides": {"type": "integer", "description": "sides on each die (default 6)"},
                "count": {"type": "integer", "description": "how many dice (default 1)"},
            },
        },
        parallel_safe=True,
    )
