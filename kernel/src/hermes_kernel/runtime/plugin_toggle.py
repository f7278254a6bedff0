"""A plugin enabled or disabled in config.yaml: ``hermes plugins enable|disable`` and the
dashboard both change it here, and both say when the environment overrides it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_kernel.config.errors import ConfigError

if TYPE_CHECKING:
    from hermes_kernel.app import App

__all__ = ["toggle_plugin"]


def _installed_since(name: str) -> bool:
    """A Hermes plugin installed after this process looked (an install that enables what
    it brought): its entry point is there now."""
    from importlib.metadata import entry_points

    return any(point.name == name for point in entry_points(group="hermes.plugins"))


def toggle_plugin(app: App, name: str, enabled: bool) -> str:
    """Enable or disable ``name``; the lines to show. ConfigError when no such plugin is
    installed (to enable) or config.yaml cannot be edited."""
    from hermes_kernel.config.edit import set_plugin_enabled
    from hermes_kernel.config.settings import load_settings
    from hermes_kernel.plugins.policy import PluginPolicy

    settings = app.settings  # refuses to edit a config that does not validate
    host = app.host
    if enabled and host.record(name) is None:  # a foreign one is looked for only then:
        host.find_foreign(frozenset({name}))  # disabling must work whatever breaks
    record = host.record(name)
    if enabled and record is None and not _installed_since(name):
        raise ConfigError([f"no installed plugin named {name!r}; see: hermes plugins list"])
    # Not a Hermes plugin (a foreign one, or a name nothing has): taking it out of
    # plugins.enabled must not leave an empty allow-list behind.
    foreign = (record is None and not _installed_since(name)) or (
        record is not None and record.foreign
    )
    foreign = foreign or name in settings.plugins.foreign
    if enabled:
        host.find_configured()  # the foreign names in plugins.enabled restrict nothing
    allow_list = host.policy.allow_list() is not None
    set_plugin_enabled(settings.config_path, name, enabled, foreign=foreign, allow_list=allow_list)
    verb = "enabled" if enabled else "disabled"
    origin = f" ({record.origin})" if record is not None and record.origin else ""
    lines = [f"{name}{origin}: {verb} in {settings.config_path}"]
    if record is None:
        lines.append(
            f"note: no plugin named {name!r} is installed; it will stay disabled if installed later"
        )
    # The environment outranks config.yaml: say so when it will override what was just set.
    fresh = load_settings(app.flags)
    policy = replace(
        PluginPolicy.from_sources(fresh.plugins, fresh.environ, app.flags.safe_mode),
        found_foreign=host.policy.found_foreign,
    )
    decision = policy.decide(name, foreign=record is not None and record.foreign)
    if decision.enabled != enabled:
        lines.append(
            f"note: still {'disabled' if enabled else 'enabled'} in this shell: {decision.reason}"
        )
    return "\n".join(lines)
