"""Which installed plugins may load: one decision, from flags, environment and config.

Order (first match decides):
1. ``HERMES_DISABLE_PLUGINS`` (comma list; ``*`` = all) blocks.
2. ``--safe-mode`` loads nothing but the plugins named in ``HERMES_LOAD_PLUGINS``.
3. ``HERMES_LOAD_PLUGINS``, when set (even empty), is the allow-list.
4. ``plugins.disabled`` in config.yaml blocks.
5. ``plugins.enabled`` in config.yaml, when set, is the allow-list (opt-in).
6. Otherwise every installed plugin loads.

Foreign plugins (another agent's, found by a plugin source) are opt-in: one loads only when
``plugins.foreign`` names it (``hermes plugins enable NAME`` writes it there), which restricts
nothing else. A foreign plugin's name written into ``plugins.enabled`` by hand (as the other
agent's docs say) enables it too, and is never counted in that allow-list: a list naming only
foreign plugins leaves every Hermes plugin enabled. A name nothing has (a typo) still counts,
so a mistyped allow-list stays one.

No plugin is exempt: everything needed to repair an installation (``plugins``, ``config``,
``doctor``) lives in the kernel and works with zero plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hermes_kernel.config.controls import PluginSettings


@dataclass(frozen=True)
class Decision:
    enabled: bool
    reason: str
    opt_in: bool = False  # disabled only because nothing opted in to it (a foreign plugin)


def _names(raw: str | None) -> frozenset[str] | None:
    if raw is None:
        return None
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


@dataclass(frozen=True)
class PluginPolicy:
    """The plugin controls in effect for one process."""

    allow_env: frozenset[str] | None = None
    block_env: frozenset[str] | None = None
    safe_mode: bool = False
    config_enabled: frozenset[str] | None = None
    config_disabled: frozenset[str] = frozenset()
    config_foreign: frozenset[str] = frozenset()
    found_foreign: frozenset[str] = frozenset()
    """The foreign plugins the sources found so far (their names leave the allow-list)."""

    @classmethod
    def from_sources(
        cls, config: PluginSettings, environ: Mapping[str, str], safe_mode: bool
    ) -> PluginPolicy:
        return cls(
            allow_env=_names(environ.get("HERMES_LOAD_PLUGINS")),
            block_env=_names(environ.get("HERMES_DISABLE_PLUGINS")),
            safe_mode=safe_mode,
            config_enabled=None if config.enabled is None else frozenset(config.enabled),
            config_disabled=frozenset(config.disabled),
            config_foreign=frozenset(config.foreign),
        )

    def allow_list(self) -> frozenset[str] | None:
        """``plugins.enabled`` as an allow-list of Hermes plugins, or None when it is not one
        (unset, or naming only foreign plugins; an explicitly empty list still is one)."""
        if not self.config_enabled:
            return self.config_enabled
        own = self.config_enabled - self.found_foreign
        return own or None

    def decide(self, name: str, *, foreign: bool = False) -> Decision:
        if self.block_env is not None and ("*" in self.block_env or name in self.block_env):
            return Decision(False, "blocked by HERMES_DISABLE_PLUGINS")
        if self.safe_mode:
            if self.allow_env is not None and name in self.allow_env:
                return Decision(True, "named in HERMES_LOAD_PLUGINS (safe mode)")
            return Decision(False, "safe mode")
        if self.allow_env is not None:
            if name in self.allow_env:
                return Decision(True, "named in HERMES_LOAD_PLUGINS")
            return Decision(False, "not in HERMES_LOAD_PLUGINS")
        if name in self.config_disabled:
            return Decision(False, "plugins.disabled in config.yaml")
        if foreign:
            if name in self.config_foreign:
                return Decision(True, "plugins.foreign in config.yaml")
            if self.config_enabled is not None and name in self.config_enabled:
                return Decision(True, "plugins.enabled in config.yaml (belongs in plugins.foreign)")
            return Decision(False, f"opt-in: hermes plugins enable {name}", opt_in=True)
        allow = self.allow_list()
        if allow is not None:
            if name in allow:
                return Decision(True, "plugins.enabled in config.yaml")
            return Decision(False, "not in plugins.enabled in config.yaml")
        return Decision(True, "installed")
