"""The pluggy markers for the ``hermes`` project, and a factory for a bare plugin manager."""

from __future__ import annotations

import pluggy

PROJECT_NAME = "hermes"
"""The pluggy project name: hooks are marked with it and named ``hermes_*``."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


def spec_names() -> list[str]:
    """Every Hermes hook's name, in order."""
    from hermes_sdk import hookspecs

    marker = f"{PROJECT_NAME}_spec"
    return sorted(name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), marker))


def plugin_manager_for(plugin: object) -> pluggy.PluginManager:
    """A plugin manager that knows the specs of the hooks ``plugin`` names and no others: all
    that loading one plugin on its own needs (its hookimpls checked against their specs, its
    registration hooks called). Parsing every spec costs most of a millisecond, and a
    command loads a plugin manager per plugin it imports."""
    import types

    from hermes_sdk import hookspecs

    marker = f"{PROJECT_NAME}_spec"
    hooks = set()
    for name in dir(plugin):
        options = getattr(getattr(plugin, name, None), f"{PROJECT_NAME}_impl", None)
        if options is not None:  # an impl may name its hook (pluggy's specname)
            hooks.add(str((options or {}).get("specname") or name))
        elif name.startswith(f"{PROJECT_NAME}_"):
            hooks.add(name)  # unmarked: pluggy's own check will say so
    named = {
        hook: getattr(hookspecs, hook)
        for hook in hooks
        if hasattr(getattr(hookspecs, hook, None), marker)
    }
    specs = types.ModuleType(f"{hookspecs.__name__}:some")
    specs.__dict__.update(named)
    manager = pluggy.PluginManager(PROJECT_NAME)
    if named:  # pluggy refuses a module without specs: a plugin that names no hook needs none
        manager.add_hookspecs(specs)
    return manager


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager that knows every Hermes hook spec and has no plugins registered.

    The kernel builds its own on top of this; tests use it through the test kit's fixtures.
    """
    from hermes_sdk import hookspecs

    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    return manager
