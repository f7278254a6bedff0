"""The validated kernel settings as plain data: what commands read on every start.

pydantic (config/model.py) validates config.yaml; its result is turned into these frozen
dataclasses, which can be cached and rebuilt without importing pydantic or PyYAML, so a
command such as ``hermes plugins list`` starts without paying for either.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hermes_kernel.config.defaults import (
    PLUGINS_HOOK_TIMEOUT_SECONDS,
    PLUGINS_LOAD_TIMEOUT_SECONDS,
    PLUGINS_STRICT,
)

KERNEL_SECTIONS = frozenset(
    {
        "plugins",
        "store",
        "model",
        "agent",
        "tools",
        "budget",
        "providers",
        "credential_pools",
        "approvals",
        "terminal",
        "learning",
        "compression",
        "media",
        "auxiliary",
        "logging",
    }
)
"""Top-level config.yaml keys the kernel owns; plugins cannot claim them."""


@dataclass(frozen=True)
class PluginSettings:
    """The ``plugins:`` section, validated. Defaults mirror ``PluginsConfig`` (a test pins it)."""

    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()
    load_timeout_seconds: float = PLUGINS_LOAD_TIMEOUT_SECONDS
    strict: bool = PLUGINS_STRICT
    hook_timeout_seconds: float = PLUGINS_HOOK_TIMEOUT_SECONDS
    isolated: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> PluginSettings:
        """Build from validated values (a model dump or the cache)."""
        enabled = data.get("enabled")
        return cls(
            enabled=None if enabled is None else tuple(enabled),
            disabled=tuple(data.get("disabled") or ()),
            load_timeout_seconds=float(
                data.get("load_timeout_seconds", PLUGINS_LOAD_TIMEOUT_SECONDS)
            ),
            strict=bool(data.get("strict", PLUGINS_STRICT)),
            hook_timeout_seconds=float(
                data.get("hook_timeout_seconds", PLUGINS_HOOK_TIMEOUT_SECONDS)
            ),
            isolated=tuple(data.get("isolated") or ()),
            foreign=tuple(data.get("foreign") or ()),
        )

    def as_mapping(self) -> dict[str, Any]:
        data = asdict(self)
        data["enabled"] = None if self.enabled is None else list(self.enabled)
        data["disabled"] = list(self.disabled)
        data["isolated"] = list(self.isolated)
        data["foreign"] = list(self.foreign)
        return data
