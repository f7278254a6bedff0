"""Register a plugin the way the kernel does, without the kernel."""

from __future__ import annotations

from dataclasses import dataclass

import pluggy

from hermes_sdk.registration import SpecIndex, check_hookimpls, collect_specs
from hermes_sdk.specs import Kind, Spec


@dataclass(frozen=True, slots=True)
class RegisteredPlugin:
    """A plugin registered for one test, and the specs it yielded."""

    name: str
    plugin: object
    specs: tuple[Spec, ...]

    def provided(self, kind: Kind) -> dict[str, Spec]:
        """The specs of one kind, by name."""
        return {spec.name: spec for spec in self.specs if spec.kind is kind}


def register_checked(
    manager: pluggy.PluginManager, index: SpecIndex, plugin: object, name: str | None = None
) -> RegisteredPlugin:
    """Register ``plugin``, check its hookimpls, collect its specs and add them to ``index``.

    On any failure the plugin is unregistered again and the error propagates, so a test can
    assert on it with ``pytest.raises``.
    """
    registered_name = manager.register(plugin, name=name)
    if registered_name is None:
        raise ValueError(f"plugin {name or plugin!r} is blocked in this manager")
    try:
        check_hookimpls(manager, plugin)
        specs = collect_specs(manager, plugin)
        index.add_all(registered_name, specs)
    except BaseException:
        manager.unregister(plugin)
        raise
    return RegisteredPlugin(registered_name, plugin, tuple(specs))
