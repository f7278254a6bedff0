"""Which store engine keeps a home's state, and opening it: the plugin whose
:class:`~hermes_sdk.specs.StoreEngineSpec` declares ``in_home`` when ``store.url`` is unset,
else the one whose ``schemes`` hold the URL's scheme. The kernel holds no engine: with none
for the home, every command that needs the store fails with one line naming what to install
(no engine, no state)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from hermes_commons.leases import LEASES
from hermes_kernel.config.store_location import StoreLocation, store_location
from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.plugin_store import migrate_schema
from hermes_sdk import Kind, StoreEngineSpec
from hermes_sdk.store_engine import StoreTarget

if TYPE_CHECKING:
    from hermes_kernel.plugins.host import PluginHost
    from hermes_kernel.store.state import StateStore

__all__ = [
    "STANDARD_ENGINE",
    "NoStoreEngine",
    "engine_for",
    "home_engines",
    "open_database",
    "open_state_store",
    "open_target",
    "open_with",
    "store_exists",
    "store_where",
    "target_of",
]

STANDARD_ENGINE = "store-sqlite"
"""The standard bundle's engine for a store in the home: named as the fix when none is."""


class NoStoreEngine(StoreError):
    """No installed and enabled plugin keeps this home's store: what is missing, and the
    step that fixes it."""

    def __init__(self, why: str, fix: str, *, failed: bool) -> None:
        self.why = why
        self.fix = fix
        self.failed = failed
        """The plugin that provides it failed to load (a broken install), rather than being
        off or not installed (a choice)."""
        super().__init__(f"{why}; {fix}")


def target_of(home: Path, location: StoreLocation) -> StoreTarget:
    return StoreTarget(home, location.url, location.password, location.pool_size)


def _scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def engine_for(host: PluginHost, url: str | None) -> StoreEngineSpec:
    """The engine for a store at ``url`` (None: in the home); StoreError in one line when no
    installed and enabled plugin provides one. Engine plugins are imported one at a time, the
    standard one first, until one fits: a home in the home never imports a server's driver
    plugin, and one on a server only the plugins that may open its scheme."""
    scheme = None if url is None else _scheme(url)

    def fits(spec: StoreEngineSpec) -> bool:
        return spec.in_home if scheme is None else scheme in spec.schemes

    declarers = sorted(
        {record.name for records in host.declared(Kind.STORE_ENGINE).values() for record in records}
        | {record.name for record in host.enabled() if not record.has_manifest},
        key=lambda name: (name != STANDARD_ENGINE, name),
    )
    for plugin in declarers:
        host.load(plugin)
        for provided in host.index.of_kind(Kind.STORE_ENGINE):
            spec = cast(StoreEngineSpec, provided.spec)
            if provided.plugin == plugin and fits(spec):
                return spec
    raise _missing(host, url)


def _missing(host: PluginHost, url: str | None) -> NoStoreEngine:
    from hermes_kernel.plugins.missing import absence

    if url is None:
        why, fix, failed = absence(host, Kind.STORE_ENGINE, "a store engine", STANDARD_ENGINE)
        return NoStoreEngine(f"{why}, so this home has no state store", fix, failed=failed)
    scheme = _scheme(url)
    # An engine for URLs of a scheme is published as store-SCHEME (the catalog's rule).
    install = f"install it: hermes plugins install store-{scheme}"
    why, fix, failed = absence(
        host, Kind.STORE_ENGINE, f"a store engine for {scheme}://", "", install=install, name=scheme
    )
    return NoStoreEngine(f"store.url names a {scheme}:// database, and {why}", fix, failed=failed)


def open_database(
    host: PluginHost, home: Path, config: Mapping[str, Any] | None = None
) -> StoreBackend:
    """The home's store, open and migrated; StoreError in one line when it cannot be."""
    location = store_location(home, config)
    return open_target(host, target_of(home, location))


def open_target(host: PluginHost, target: StoreTarget) -> StoreBackend:
    """The store at ``target``, opened by the engine for it."""
    return open_with(engine_for(host, target.url), target)


def home_engines(host: PluginHost) -> list[StoreEngineSpec]:
    """The installed engines that keep a store in the home, by name."""
    engines = [cast(StoreEngineSpec, p.spec) for p in host.provided(Kind.STORE_ENGINE)]
    return sorted((engine for engine in engines if engine.in_home), key=lambda e: e.name)


def open_with(engine: StoreEngineSpec, target: StoreTarget) -> StoreBackend:
    """The store at ``target``, opened by ``engine``; StoreError in one line."""
    try:
        db = cast(StoreBackend, engine.build(target))
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - an engine's bug is one line, never a traceback
        raise StoreError(
            f"the store engine {engine.name!r} failed to open the store "
            f"({type(exc).__name__}: {exc})"
        ) from None
    try:  # the one table of leases every process that owns something shares
        migrate_schema(db, LEASES)
    except BaseException:
        db.close()
        raise
    return db


def store_exists(host: PluginHost, home: Path, config: Mapping[str, Any] | None = None) -> bool:
    """Whether the home's store is there already (without making it)."""
    location = store_location(home, config)
    engine = engine_for(host, location.url)
    return engine.locate is None or engine.locate(target_of(home, location)).exists()


def store_where(host: PluginHost, home: Path, config: Mapping[str, Any] | None = None) -> str:
    """Where the home's store is (or would be), without opening it: a path, or the URL
    without its password."""
    from hermes_commons.redact import url_without_password

    location = store_location(home, config)
    if location.url is not None:
        return url_without_password(location.url)
    engine = engine_for(host, None)
    if engine.locate is None:
        return f"in HERMES_HOME (the {engine.name} store engine)"
    return str(engine.locate(target_of(home, location)))


def open_state_store(
    host: PluginHost, home: Path, config: Mapping[str, Any] | None = None
) -> StateStore:
    """The home's :class:`~hermes_kernel.store.state.StateStore`; StoreError in one line."""
    from hermes_kernel.store.state import StateStore

    return StateStore(open_database(host, home, config))
