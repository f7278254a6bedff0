"""What the kernel knows about an installed plugin before and after loading it."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_sdk import Kind, Spec, manifest_key


@dataclass(frozen=True)
class PluginRecord:
    """An installed plugin as read from package metadata, without importing it."""

    name: str
    target: str  # the entry point value: "module" or "module:attribute"
    distribution: str
    version: str
    declares: frozenset[tuple[Kind, str]] = frozenset()
    has_manifest: bool = False
    problems: tuple[str, ...] = ()  # metadata errors that make the plugin unloadable
    summary: str = ""  # the distribution's one-line description
    help: tuple[tuple[str, str], ...] = ()  # (manifest key, one line) from its help file
    argument: str | None = None
    """Set for a foreign plugin (one a plugin source found): ``target`` is then a function,
    called with this, that builds the plugin object."""
    origin: str = ""  # where a foreign plugin was found, for listings

    @property
    def foreign(self) -> bool:
        """Found by a plugin source, not installed as a Hermes plugin: opt-in."""
        return self.argument is not None

    def help_for(self, kind: Kind, name: str) -> str:
        """What the plugin's help file says ``name`` of ``kind`` does ('' when it says nothing)."""
        key = manifest_key(kind, name)
        return next((text for k, text in self.help if k == key), "")

    @property
    def label(self) -> str:
        """``'name' (distribution version)`` for one-line messages."""
        return f"plugin {self.name!r} ({self.distribution} {self.version})"

    def declared_names(self, kind: Kind) -> list[str]:
        return sorted(name for k, name in self.declares if k is kind)


@dataclass
class LoadOutcome:
    """The result of importing and registering one plugin."""

    name: str
    ok: bool
    seconds: float
    error: str | None = None
    traceback: str | None = None
    specs: list[Spec] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)  # lifecycle hooks it implements
    plugin: object | None = None  # the registered object, once loaded
    warnings: list[str] = field(default_factory=list)

    def provided(self) -> set[tuple[Kind, str]]:
        """What it provides, as its manifest should declare it: each spec, each lifecycle
        hook it implements, and the default command it marks (``CommandSpec.default``)."""
        from hermes_sdk import CommandSpec

        found = {(spec.kind, spec.name) for spec in self.specs}
        found |= {(Kind.HOOK, hook) for hook in self.hooks}
        found |= {
            (Kind.DEFAULT_COMMAND, spec.name)
            for spec in self.specs
            if isinstance(spec, CommandSpec) and spec.default
        }
        return found
