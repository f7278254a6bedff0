"""The kernel's own config.yaml sections. Plugins bring models for their sections."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class PluginsConfig(BaseModel):
    """The ``plugins:`` section: which plugins load, and how."""

    # Unknown keys are kept and reported as warnings, so an older or newer home still loads.
    model_config = ConfigDict(extra="allow")

    enabled: list[str] | None = Field(
        default=None,
        description="If set, only these plugins load (opt-in). Unset: every installed plugin.",
    )
    disabled: list[str] = Field(default_factory=list, description="Plugins that never load.")
    load_timeout_seconds: float = Field(
        default=10.0, gt=0, le=600, description="Deadline for importing and registering one plugin."
    )
    strict: bool = Field(
        default=False, description="Treat a plugin failure as an error (for plugin developers)."
    )


class KernelConfig(BaseModel):
    """The whole config.yaml as the kernel sees it; other top-level keys belong to plugins."""

    model_config = ConfigDict(extra="allow")

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)

    @field_validator("plugins", mode="before")
    @classmethod
    def _empty_section_means_defaults(cls, value: Any) -> Any:
        # "plugins:" with nothing under it parses as None; treat it as an empty section.
        return {} if value is None else value
