"""A mixture's settings: the keys of its ``providers:`` entry besides the router's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hermes_commons.sections import closest, drop_unknown, fields_at, section_settings

__all__ = ["MixtureConfig", "Slot", "mixture_settings"]


class Slot(BaseModel):
    """One model of the mixture: an endpoint (``providers:`` entry or a plugin's) and,
    optionally, one of its models."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1, description="An endpoint name, as in model.provider.")
    model: str | None = Field(default=None, min_length=1, description="Unset: its default.")
    temperature: float | None = Field(default=None, ge=0, le=2)

    @property
    def label(self) -> str:
        return f"{self.provider} ({self.model})" if self.model else self.provider


def _slot(value: Any) -> Any:
    return {"provider": value} if isinstance(value, str) else value


class MixtureConfig(BaseModel):
    """``providers.NAME`` with ``transport: moa``."""

    model_config = ConfigDict(extra="forbid")

    reference_models: list[Slot] = Field(
        min_length=1, max_length=8, description="Asked in parallel for advice, without tools."
    )
    aggregator: Slot = Field(description="Answers the user and calls the tools, advised.")
    reference_max_tokens: int | None = Field(
        default=None, ge=16, description="The longest answer a reference model may give."
    )
    fanout: Literal["per_call", "per_turn"] = Field(
        default="per_call",
        description="per_call: the reference models are asked before every model call of "
        "a turn (after each tool result); per_turn: once per message of the user.",
    )

    @field_validator("reference_models", mode="before")
    @classmethod
    def _names_are_slots(cls, value: Any) -> Any:
        return [_slot(item) for item in value] if isinstance(value, list) else value

    @field_validator("aggregator", mode="before")
    @classmethod
    def _name_is_a_slot(cls, value: Any) -> Any:
        return _slot(value)


def mixture_settings(options: Mapping[str, Any]) -> MixtureConfig:
    """``options`` validated; ValueError in one line naming the key to fix (an unknown key
    with the one it most likely meant)."""
    data = dict(options)
    _, dropped = drop_unknown(MixtureConfig, data)
    if dropped:
        location = dropped[0]
        key = ".".join(str(part) for part in location)
        known = fields_at(MixtureConfig, location[:-1])
        meant = closest(str(location[-1]), known)
        hint = f" (did you mean {meant}?)" if meant else f" (known: {', '.join(known)})"
        raise ValueError(f"{key}: unknown key{hint}")
    return section_settings("", MixtureConfig, data)
