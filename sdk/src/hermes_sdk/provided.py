"""What other plugins provide, for a plugin that builds on their contributions.

Some kinds are provided for another plugin to use rather than for the kernel: a skill
source's folder, for instance, is read by whichever plugin handles skills. The kernel only
indexes such specs; each context a plugin receives (``ToolContext``, ``PromptContext``,
``SlashContext``, ``CommandContext``) carries them as :class:`ProvidedSpecs`, and the plugin
decides what they mean::

    for spec in context.provided.of(Kind.SKILL_SOURCE):
        folder = spec.factory()

A plugin listed in ``plugins.isolated`` runs in a process of its own, where this is empty:
other plugins' specs hold callables that stay in the agent's process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_sdk.specs import Kind, Spec

__all__ = ["SHARED_KINDS", "ProvidedSpecs"]

SHARED_KINDS: frozenset[Kind] = frozenset({Kind.SKILL_SOURCE})
"""Kinds that plugins provide for other plugins: the kernel loads their providers before it
builds a context, so a tool or a prompt section never waits for a plugin to import."""


class ProvidedSpecs:
    """The specs of each kind that the loaded plugins provide, in name order."""

    __slots__ = ("_find", "_lookup", "_owner")

    def __init__(
        self,
        lookup: Callable[[Kind], Sequence[Spec]] | Mapping[Kind, Sequence[Spec]] | None = None,
        *,
        find: Callable[[Kind, str], Spec | None] | None = None,
        owner: Callable[[Spec], str] | None = None,
    ) -> None:
        if isinstance(lookup, Mapping):
            table = dict(lookup)
            self._lookup: Callable[[Kind], Sequence[Spec]] = lambda kind: table.get(kind, ())
        else:
            self._lookup = lookup or (lambda kind: ())
        self._find = find
        self._owner = owner

    def of(self, kind: Kind) -> tuple[Spec, ...]:
        """Every spec of ``kind`` the loaded plugins provide (none: an empty tuple)."""
        return tuple(self._lookup(kind))

    def named(self, kind: Kind, name: str) -> Spec | None:
        """The spec of ``kind`` called ``name``, or None; where the kernel can, this loads
        only the plugins that may provide that name."""
        if self._find is not None:
            return self._find(kind, name)
        return next((spec for spec in self.of(kind) if spec.name == name), None)

    def owner(self, spec: Spec) -> str:
        """The name of the plugin that provided ``spec`` ("" when not known)."""
        return self._owner(spec) if self._owner is not None else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses to an isolated plugin's process empty: the specs' callables cannot.
        return (ProvidedSpecs, ())

    def __repr__(self) -> str:
        return "ProvidedSpecs(...)"
