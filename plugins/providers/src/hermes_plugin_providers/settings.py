"""The ``model:``, ``providers:`` and ``credential_pools:`` sections as plain data.

config.yaml was validated by pydantic when it was loaded (config/model.py, result cached);
this reads the validated mapping without importing pydantic, so a chat starts fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_sdk.ladder import Endpoint
from hermes_sdk.models import MODEL_TIMEOUT_SECONDS


@dataclass(frozen=True)
class Fallback:
    provider: str
    model: str | None = None


_ENTRY_KEYS = frozenset(
    {
        "base_url",
        "api_key_env",
        "transport",
        "models",
        "default_model",
        "options",
        "context_length",
        "vision",
        "stream",
    }
)
"""The keys of a ``providers:`` entry the router reads; in an entry with no ``base_url`` (a
virtual transport's: a mixture) any other is an option for its transport, as if written
under ``options`` (in others, config.yaml's check names them as unknown)."""


def _custom_endpoint(name: str, entry: Mapping[str, Any]) -> Endpoint:
    base_url = str(entry.get("base_url") or "")
    extra = (
        {} if base_url else {key: value for key, value in entry.items() if key not in _ENTRY_KEYS}
    )
    model = entry.get("default_model") or (entry.get("models") or [""])[0]
    return Endpoint(
        name=name,
        provider=str(entry.get("transport") or ""),
        base_url=base_url,
        api_key_env=entry.get("api_key_env"),
        # An endpoint with no server of its own (a virtual transport) is its own model.
        default_model=str(model or ("" if base_url else name)),
        models=tuple(entry.get("models") or ()),
        options={**extra, **dict(entry.get("options") or {})},
        stream=entry.get("stream") is not False,
    )


@dataclass(frozen=True)
class ModelSettings:
    provider: str | None = None  # None: auto
    model: str | None = None
    base_url: str | None = None
    transport: str = ""
    """The provider plugin speaking ``base_url``'s protocol; "": the default transport."""
    api_key_env: str | None = None
    timeout_seconds: float = MODEL_TIMEOUT_SECONDS
    fallbacks: tuple[Fallback, ...] = ()
    custom: Mapping[str, Endpoint] = field(default_factory=dict)
    pools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_config(cls, raw: Mapping[str, Any]) -> ModelSettings:
        section = raw.get("model") or {}
        if isinstance(section, str):  # "model: NAME" is short for "model: {default: NAME}"
            section = {"default": section}
        provider = section.get("provider")
        custom = {
            name: _custom_endpoint(name, entry)
            for name, entry in (raw.get("providers") or {}).items()
        }
        return cls(
            provider=None if provider in (None, "auto") else str(provider),
            model=section.get("default"),
            base_url=section.get("base_url"),
            transport=str(section.get("transport") or ""),
            api_key_env=section.get("api_key_env"),
            timeout_seconds=float(section.get("timeout_seconds") or MODEL_TIMEOUT_SECONDS),
            fallbacks=tuple(
                Fallback(str(item["provider"]), item.get("model"))
                for item in section.get("fallback_providers") or ()
            ),
            custom=custom,
            pools={
                name: tuple(names) for name, names in (raw.get("credential_pools") or {}).items()
            },
        )
