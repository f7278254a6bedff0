"""Why nothing provides a kind the kernel cannot work without (command rules, a model
router), in one line that ends with the step that fixes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from hermes_sdk import Kind

if TYPE_CHECKING:
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["Absence", "absence", "turn_on", "why_missing"]


class Absence(NamedTuple):
    why: str
    fix: str
    failed: bool
    """A plugin that provides it failed to load (a broken install), rather than being off or
    not installed (a choice)."""


def absence(
    host: PluginHost,
    kind: Kind,
    what: str,
    standard: str,
    *,
    install: str | None = None,
    name: str | None = None,
) -> Absence:
    """Why no plugin provides ``kind`` (named ``name``, when given): ``what`` names it for
    people ("command rules"); ``standard`` is the plugin the standard bundle provides it
    with, named when no installed plugin declares it (``install``, when given, is that step
    instead)."""
    # The standard plugin first: when it is off, turning it on is the step to name.
    for record in sorted(host.records, key=lambda record: record.name != standard):
        names = record.declared_names(kind)
        if not names or (name is not None and name not in names):
            continue
        decision = host.decision(record.name)
        if not decision.enabled:
            return Absence(
                f"no plugin provides {what}: plugin {record.name!r} does, but is off "
                f"({decision.reason})",
                turn_on(record.name, decision.reason),
                failed=False,
            )
        outcome = host.outcomes.get(record.name)
        if outcome is not None and not outcome.ok:
            return Absence(
                f"no plugin provides {what}: plugin {record.name!r} does, but failed to load "
                f"({outcome.error})",
                f"see: hermes plugins info {record.name}",
                failed=True,
            )
    return Absence(
        f"no plugin provides {what}",
        install or f"install the standard one: hermes plugins install {standard}",
        failed=False,
    )


def why_missing(host: PluginHost, kind: Kind, what: str, standard: str) -> str:
    """:func:`absence` as one line: what is missing, then the step that fixes it."""
    why, fix, _ = absence(host, kind, what, standard)
    return f"{why}; {fix}"


def turn_on(name: str, reason: str) -> str:
    """The step that enables plugin ``name``, by why it is off."""
    if "HERMES_DISABLE_PLUGINS" in reason:
        return f"take {name} out of HERMES_DISABLE_PLUGINS"
    if "HERMES_LOAD_PLUGINS" in reason or "safe mode" in reason:
        return f"add {name} to HERMES_LOAD_PLUGINS"
    return f"enable it: hermes plugins enable {name}"
