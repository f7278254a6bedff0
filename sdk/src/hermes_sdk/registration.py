"""What a valid registration is: the checks the kernel and the test kit both apply.

Registering a plugin with pluggy is not enough to know it is sound. These functions check the
rest of the contract: every ``@hookimpl`` matches a hook spec, registration hooks yield the
right spec types, and no name is provided twice (within a plugin or across plugins).
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pluggy

from hermes_sdk.hookspecs import REGISTRATION_HOOKS
from hermes_sdk.specs import Kind, Spec

__all__ = ["Provided", "RegistrationError", "SpecIndex", "check_hookimpls", "collect_specs"]


class RegistrationError(Exception):
    """A plugin broke the contract; the message says what to fix, in one line."""


def check_hookimpls(manager: pluggy.PluginManager, plugin: object) -> None:
    """Raise RegistrationError if a hookimpl of ``plugin`` matches no spec or is a wrapper.

    pluggy accepts a misspelt hook silently (it waits for a spec that never comes), so a
    typo would make a plugin do nothing; we refuse it and suggest the closest hook name.
    """
    for caller in manager.get_hookcallers(plugin) or []:
        if not caller.has_spec():
            from hermes_sdk._markers import spec_names

            close = difflib.get_close_matches(caller.name, spec_names(), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RegistrationError(f"hookimpl {caller.name!r} matches no hook spec{hint}")
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and (impl.hookwrapper or impl.wrapper):
                raise RegistrationError(
                    f"hookimpl {caller.name!r} is a wrapper; Hermes hooks do not support wrappers"
                )


def collect_specs(
    manager: pluggy.PluginManager,
    plugin: object,
    observe: Callable[[str, float], None] | None = None,
) -> list[Spec]:
    """Call ``plugin``'s registration hooks and return the specs they yield, checked.

    Exceptions raised by the plugin propagate unchanged (the caller decides how to report
    them); contract violations raise RegistrationError. ``observe(hook, seconds)`` is told
    how long each hook took, for tracing.
    """
    specs: list[Spec] = []
    seen: set[tuple[Kind, str]] = set()
    for hook_name, spec_type in REGISTRATION_HOOKS.items():
        caller: pluggy.HookCaller | None = getattr(manager.hook, hook_name, None)
        if caller is None:  # a manager made for this plugin knows only the hooks it names
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            started = time.perf_counter()
            produced = impl.function()
            if produced is None:
                items: list[object] = []
            elif isinstance(produced, str | bytes | Spec) or not isinstance(produced, Iterable):
                raise RegistrationError(
                    f"{hook_name} must yield {spec_type.__name__} objects, "
                    f"returned {type(produced).__name__}"
                )
            else:
                items = list(produced)  # runs a generator's body: still the plugin's time
            if observe is not None:
                observe(hook_name, time.perf_counter() - started)
            for item in items:
                if not isinstance(item, spec_type):
                    raise RegistrationError(
                        f"{hook_name} yielded {type(item).__name__}, expected {spec_type.__name__}"
                    )
                key = (item.kind, item.name)
                if key in seen:
                    raise RegistrationError(f"provides {item.kind.value} {item.name!r} twice")
                seen.add(key)
                specs.append(item)
    return specs


@dataclass(frozen=True, slots=True)
class Provided:
    """A spec and the plugin that provided it."""

    spec: Spec
    plugin: str


class SpecIndex:
    """Every provided spec by kind and name; refuses a name that is already taken."""

    def __init__(self) -> None:
        self._by_kind: dict[Kind, dict[str, Provided]] = {kind: {} for kind in Kind}

    def add_all(self, plugin: str, specs: Iterable[Spec]) -> None:
        """Add all of ``plugin``'s specs, or none of them if one name is taken."""
        batch = list(specs)
        for spec in batch:
            taken = self._by_kind[spec.kind].get(spec.name)
            if taken is not None and taken.plugin != plugin:
                raise RegistrationError(
                    f"provides {spec.kind.value} {spec.name!r}, already provided by plugin "
                    f"{taken.plugin!r}; disable one of the two"
                )
        for spec in batch:
            self._by_kind[spec.kind][spec.name] = Provided(spec, plugin)

    def remove_plugin(self, plugin: str) -> None:
        """Forget everything ``plugin`` provided."""
        for entries in self._by_kind.values():
            for name in [n for n, p in entries.items() if p.plugin == plugin]:
                del entries[name]

    def get(self, kind: Kind, name: str) -> Provided | None:
        return self._by_kind[kind].get(name)

    def of_kind(self, kind: Kind) -> list[Provided]:
        """The specs of one kind, sorted by name."""
        return [self._by_kind[kind][name] for name in sorted(self._by_kind[kind])]

    def __iter__(self) -> Iterator[Provided]:
        for kind in Kind:
            yield from self.of_kind(kind)
