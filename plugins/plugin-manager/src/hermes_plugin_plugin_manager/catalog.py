"""The plugin catalog: pinned entries, the removed list and the distro bundles.

A catalog is a folder (``plugin-catalog/`` in the repository):

    entries/NAME.yaml    one plugin each: where to get it (pinned), what it provides, who keeps it
    removed.yaml         plugins or versions that install refuses, each with the reason
    bundles.yaml         named sets of plugins (the one source of the bundle locks)
    bundles/NAME.txt     each bundle locked: every package pinned with its sha256
    schema.json          the JSON schema of an entry, generated from :class:`CatalogEntry`
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from hermes_plugin_plugin_manager.environment import normalize as _normal
from hermes_sdk import Kind, parse_manifest_key

_PLUGIN_NAME = r"^[a-z][a-z0-9_-]{0,63}$"
_DISTRIBUTION = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
_ENV_NAME = r"^[A-Z_][A-Z0-9_]*$"


class CatalogError(Exception):
    """The catalog cannot be found or read; the message says which file and what to fix."""


class PyPISource(BaseModel):
    """A release on a package index: one exact version, and the hash of its artifact."""

    model_config = ConfigDict(extra="forbid")
    pypi: str = Field(pattern=_DISTRIBUTION, description="The distribution name on the index.")
    version: str = Field(description="The exact version to install.")
    sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="sha256 of the wheel install must receive."
    )

    @field_validator("version")
    @classmethod
    def _exact(cls, value: str) -> str:
        from packaging.version import InvalidVersion, Version

        try:
            Version(value)
        except InvalidVersion:
            raise ValueError(f"{value!r} is not an exact version like 1.2.0") from None
        return value


class GitSource(BaseModel):
    """A git repository at one full commit (never a branch or a tag, which can move)."""

    model_config = ConfigDict(extra="forbid")
    git: str = Field(description="The repository URL (https://, ssh:// or file://).")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$", description="The full 40-character commit.")
    subdirectory: str | None = Field(
        default=None, description="The package's folder inside the repository, if not the root."
    )


def _source_kind(data: Any) -> str:
    """Which source a mapping describes, so errors name its fields, not both alternatives."""
    if isinstance(data, dict):
        return "git" if "git" in data else "pypi"
    return "git" if isinstance(data, GitSource) else "pypi"


Source = Annotated[
    Annotated[PyPISource, Tag("pypi")] | Annotated[GitSource, Tag("git")],
    Discriminator(_source_kind),
]


class CatalogEntry(BaseModel):
    """One installable plugin: ``plugin-catalog/entries/NAME.yaml``."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=_PLUGIN_NAME, description="The plugin name (its entry point).")
    package: str = Field(pattern=_DISTRIBUTION, description="The distribution that installs it.")
    source: Source
    kinds: list[str] = Field(description="What kinds of things it provides (manifest prefixes).")
    provides: list[str] = Field(description="Its manifest: KIND.NAME for everything it provides.")
    description: str = Field(min_length=1, max_length=300)
    homepage: str = Field(pattern=r"^https?://", description="Where to read about it.")
    maintainer: str = Field(
        min_length=1, description="Who keeps it working, and how to reach them."
    )
    tier: Literal["official", "community"]
    requires_hermes: str = Field(
        description="The hermes-kernel versions it works with (>=0.1,<0.2)."
    )
    requires_sdk: str = Field(description="The hermes-sdk versions it was built against.")
    environment: list[Annotated[str, Field(pattern=_ENV_NAME)]] = Field(
        default_factory=list, description="Environment variables it needs to work (names only)."
    )

    @field_validator("provides")
    @classmethod
    def _manifest_keys(cls, value: list[str]) -> list[str]:
        for key in value:
            parse_manifest_key(key)  # raises with the list of valid kinds
        if value != sorted(set(value)):
            raise ValueError("list each manifest key once, sorted")
        return value

    @field_validator("requires_hermes", "requires_sdk")
    @classmethod
    def _specifier(cls, value: str) -> str:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(value)
        except InvalidSpecifier:
            raise ValueError(f"{value!r} is not a version range like >=0.1,<0.2") from None
        return value

    @model_validator(mode="after")
    def _kinds_match_provides(self) -> CatalogEntry:
        derived = kinds_of(self.provides)
        if self.kinds != derived:
            raise ValueError(f"kinds must be {derived} (the kinds of what 'provides' lists)")
        if isinstance(self.source, PyPISource) and _normal(self.source.pypi) != _normal(
            self.package
        ):
            raise ValueError(
                f"source.pypi {self.source.pypi!r} must be the package {self.package!r}"
            )
        return self

    def requirement(self) -> str:
        """The pinned requirement an installer receives for this entry."""
        if isinstance(self.source, PyPISource):
            return f"{self.package}=={self.source.version}"
        url = f"git+{self.source.git}@{self.source.commit}"
        if self.source.subdirectory:
            url += f"#subdirectory={self.source.subdirectory}"
        return f"{self.package} @ {url}"

    @property
    def version(self) -> str:
        """The pinned version, or the short commit for a git source."""
        if isinstance(self.source, PyPISource):
            return self.source.version
        return self.source.commit[:12]


def kinds_of(provides: list[str]) -> list[str]:
    return sorted({parse_manifest_key(key)[0].value for key in provides})


class Removal(BaseModel):
    """A plugin (all versions, or some) that install refuses."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="The plugin name or its package.")
    versions: list[str] | None = Field(default=None, description="Only these; unset: every one.")
    reason: str = Field(min_length=1)


class Bundle(BaseModel):
    """A named set of plugins installed together (``bundles.yaml``)."""

    model_config = ConfigDict(extra="forbid")
    description: str
    includes: list[str] = Field(default_factory=list, description="Bundles this one extends.")
    plugins: list[str] = Field(default_factory=list)


@dataclass
class Catalog:
    folder: Path
    entries: dict[str, CatalogEntry] = field(default_factory=dict)
    removed: list[Removal] = field(default_factory=list)
    bundles: dict[str, Bundle] = field(default_factory=dict)

    def find(self, name: str) -> CatalogEntry | None:
        """The entry for a plugin name or a package name."""
        if name in self.entries:
            return self.entries[name]
        wanted = _normal(name)
        return next((e for e in self.entries.values() if _normal(e.package) == wanted), None)

    def removal(self, name: str, package: str | None, version: str | None) -> Removal | None:
        """Why installing ``name``/``package`` at ``version`` is refused, if it is."""
        names = {_normal(name)} | ({_normal(package)} if package else set())
        for removal in self.removed:
            if _normal(removal.name) not in names:
                continue
            if removal.versions is None or (version is not None and version in removal.versions):
                return removal
        return None

    def search(self, term: str | None) -> list[CatalogEntry]:
        """Entries whose name, package, description, kinds or provides contain ``term``."""
        entries = sorted(self.entries.values(), key=lambda e: e.name)
        if not term:
            return entries
        needle = term.lower()
        return [
            e
            for e in entries
            if needle in " ".join([e.name, e.package, e.description, *e.kinds, *e.provides]).lower()
        ]

    def bundle_plugins(self, name: str) -> list[str]:
        """Every plugin in bundle ``name``, its includes first, each once."""
        seen: list[str] = []

        def walk(bundle_name: str, trail: tuple[str, ...]) -> None:
            if bundle_name in trail:
                raise CatalogError(f"bundles.yaml: bundle {bundle_name!r} includes itself")
            bundle = self.bundles.get(bundle_name)
            if bundle is None:
                known = ", ".join(sorted(self.bundles)) or "none"
                raise CatalogError(f"no bundle named {bundle_name!r}; bundles: {known}")
            for included in bundle.includes:
                walk(included, (*trail, bundle_name))
            seen.extend(p for p in bundle.plugins if p not in seen)

        walk(name, ())
        return seen

    def bundle_lock(self, name: str) -> Path:
        path = self.folder / "bundles" / f"{name}.txt"
        if name not in self.bundles or not path.is_file():
            known = ", ".join(sorted(self.bundles)) or "none"
            raise CatalogError(f"no bundle named {name!r}; bundles: {known}")
        return path


def _yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CatalogError(f"{path}: cannot read it: {reason}") from None


def _problem(path: Path, exc: ValidationError) -> CatalogError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return CatalogError(f"{path}: {where}: {first['msg']}{more}")


def read_entry(path: Path) -> CatalogEntry:
    data = _yaml(path)
    try:
        entry = CatalogEntry.model_validate(data)
    except ValidationError as exc:
        raise _problem(path, exc) from None
    if path.parent.name == "entries" and path.stem != entry.name:
        raise CatalogError(f"{path}: the file must be named {entry.name}.yaml, after its entry")
    return entry


def load_catalog(folder: Path) -> Catalog:
    """Read and validate a whole catalog folder; the first problem raises CatalogError."""
    if not (folder / "entries").is_dir():
        raise CatalogError(f"{folder} is not a plugin catalog (it has no entries/ folder)")
    catalog = Catalog(folder)
    for path in sorted((folder / "entries").glob("*.yaml")):
        entry = read_entry(path)
        catalog.entries[entry.name] = entry
    removed = folder / "removed.yaml"
    if removed.exists():
        data = _yaml(removed) or []
        try:
            catalog.removed = [Removal.model_validate(item) for item in data]
        except (ValidationError, TypeError) as exc:
            if isinstance(exc, ValidationError):
                raise _problem(removed, exc) from None
            raise CatalogError(f"{removed}: must be a list of {{name, reason}} items") from None
    bundles = folder / "bundles.yaml"
    if bundles.exists():
        data = _yaml(bundles) or {}
        try:
            catalog.bundles = {k: Bundle.model_validate(v) for k, v in dict(data).items()}
        except ValidationError as exc:
            raise _problem(bundles, exc) from None
        for bundle_name in catalog.bundles:
            for plugin in catalog.bundle_plugins(bundle_name):
                if plugin not in catalog.entries:
                    raise CatalogError(
                        f"{bundles}: bundle {bundle_name!r} names {plugin!r}, which has no entry"
                    )
    return catalog


def install_hint(kind: Kind, what: str) -> str:
    """How to get a plugin that provides ``kind`` (``what`` names it for people: "a model
    provider"), naming the catalog's plugins of that kind, so the hint is always something
    that can be installed."""
    try:
        catalog = load_catalog(catalog_folder())
    except CatalogError:
        return f"install a plugin that provides {what} (see: hermes plugins catalog)"
    names = [entry.name for entry in catalog.search(None) if kind.value in entry.kinds]
    if not names:
        return f"install a plugin that provides {what}"
    more = f" (or: {', '.join(names[1:])})" if names[1:] else ""
    return f"install one: hermes plugins install {names[0]}{more}"


def catalog_folder(explicit: str | None = None) -> Path:
    """Where the catalog is: ``--catalog``, then ``HERMES_CATALOG``, then this checkout's."""
    chosen = explicit or os.environ.get("HERMES_CATALOG")
    if chosen:
        return Path(chosen).expanduser()
    # Running from a checkout (the README's way): plugins/plugin-manager/src/<package>/.
    checkout = Path(__file__).resolve().parents[4] / "plugin-catalog"
    if (checkout / "entries").is_dir():
        return checkout
    raise CatalogError(
        "no plugin catalog found: pass --catalog DIR or set HERMES_CATALOG to a catalog folder"
    )
