"""The pluggy markers for the ``hermes`` project, and a factory for a bare plugin manager."""

from __future__ import annotations

import pluggy

PROJECT_NAME = "hermes"
"""The pluggy project name: hooks are marked with it and named ``hermes_*``."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager that knows every Hermes hook spec and has no plugins registered.

    The kernel builds its own on top of this; tests use it through the test kit's fixtures.
    """
    from hermes_sdk import hookspecs

    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    return manager
