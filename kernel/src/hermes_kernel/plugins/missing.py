"""Why nothing provides a kind the kernel cannot work without (command rules, a model
router), in one line that ends with the step that fixes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_sdk import Kind

if TYPE_CHECKING:
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["why_missing"]


def why_missing(host: PluginHost, kind: Kind, what: str, standard: str) -> str:
    """``what`` names the kind for people ("command rules"); ``standard`` is the plugin the
    standard bundle provides it with, named when no installed plugin declares the kind."""
    for record in host.records:
        if not record.declared_names(kind):
            continue
        decision = host.decision(record.name)
        if not decision.enabled:
            return (
                f"no plugin provides {what}: plugin {record.name!r} does, but is off "
                f"({decision.reason}); {_turn_on(record.name, decision.reason)}"
            )
        outcome = host.outcomes.get(record.name)
        if outcome is not None and not outcome.ok:
            return (
                f"no plugin provides {what}: plugin {record.name!r} does, but failed to load "
                f"({outcome.error}); see: hermes plugins info {record.name}"
            )
    return f"no plugin provides {what}; install the standard one: hermes plugins install {standard}"


def _turn_on(name: str, reason: str) -> str:
    """The step that enables plugin ``name``, by why it is off."""
    if "HERMES_DISABLE_PLUGINS" in reason:
        return f"take {name} out of HERMES_DISABLE_PLUGINS"
    if "HERMES_LOAD_PLUGINS" in reason or "safe mode" in reason:
        return f"add {name} to HERMES_LOAD_PLUGINS"
    return f"enable it: hermes plugins enable {name}"
