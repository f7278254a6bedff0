"""``hermes_cli.plugins`` for hermes-agent plugins on Hermes: the hook names, and the context
type ``register(ctx)`` receives (for type hints and ``isinstance``)."""

from __future__ import annotations

from hermes_plugin_compat_hermes_agent.context import PluginContext
from hermes_plugin_compat_hermes_agent.hooks import VALID_HOOKS

__all__ = ["VALID_HOOKS", "PluginContext"]
