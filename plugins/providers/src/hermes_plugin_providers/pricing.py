"""Estimated cost of model calls, from the price tables plugins provide."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_sdk import ModelPrice, PriceTableSpec
from hermes_sdk.models import ModelUsage

_DATED = re.compile(r"-\d{4}-?\d{2}-?\d{2}$")  # MODEL-2024-08-06, MODEL-20250929


class PriceBook:
    """Prices by model name; the first table to price a name wins."""

    def __init__(self, tables: Sequence[PriceTableSpec] = ()) -> None:
        self.prices: dict[str, ModelPrice] = {}
        self.conflicts: list[str] = []
        for table in tables:
            for model, price in table.prices.items():
                if model in self.prices:
                    self.conflicts.append(
                        f"{model} is priced by more than one table ({table.name})"
                    )
                    continue
                self.prices[model] = price

    def price(self, model: str) -> ModelPrice | None:
        """Exact name, then without a ``vendor/`` prefix (a router's names), then without a date
        suffix (a pinned snapshot of a priced model)."""
        for name in (model, model.rsplit("/", 1)[-1]):
            for candidate in (name, _DATED.sub("", name)):
                found = self.prices.get(candidate)
                if found is not None:
                    return found
        return None

    def cost(self, model: str, usage: ModelUsage) -> float | None:
        """US dollars, or None when the model's price is unknown."""
        price = self.price(model)
        if price is None:
            return None
        cache_read = price.input if price.cache_read is None else price.cache_read
        cache_write = price.input if price.cache_write is None else price.cache_write
        total = (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
        )
        return total / 1_000_000
