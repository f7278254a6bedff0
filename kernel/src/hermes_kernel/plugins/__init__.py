"""Plugin discovery, selection, safe loading and guarded hook calls."""

PLUGIN_GROUP = "hermes.plugins"
"""Entry points naming each plugin and the object to register (usually its module)."""

MANIFEST_GROUP = "hermes.provides"
"""Entry points named ``KIND.NAME`` declaring what a plugin provides, readable without import."""
