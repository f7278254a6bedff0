"""Where hermes-agent plugins are, found as hermes-agent 0.19 finds them.

- Entry points in the group ``hermes_agent.plugins``: the value is a module with
  ``register(ctx)``, or (what 0.19 itself refuses and later versions accept) the
  ``module:function`` to call.
- Entry points in ``hermes_agent.memory_providers`` (newer hermes-agent): a memory provider's
  ``register(ctx)``; ``memory.provider: NAME`` selects it.
- Folders ``HERMES_HOME/plugins/NAME/`` with an ``__init__.py`` (and usually a plugin.yaml).
  A folder whose ``__init__.py`` mentions ``register_memory_provider`` or ``MemoryProvider``
  (and whose plugin.yaml names no other ``kind``) is a memory provider: ``memory.provider:
  NAME`` selects it, as there.

Nothing is imported here; a folder's plugin.yaml and the first 8 KB of its ``__init__.py``
are read, as hermes-agent reads them.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes_plugin_compat_hermes_agent.where import Where, hermes_name
from hermes_sdk import Kind
from hermes_sdk.plugin_sources import ForeignPlugin, SourceQuery

__all__ = ["GROUP", "MEMORY_GROUP", "HermesAgentPlugins"]

log = logging.getLogger("hermes.plugins.hermes-agent")

GROUP = "hermes_agent.plugins"
MEMORY_GROUP = "hermes_agent.memory_providers"
FACTORY = "hermes_plugin_compat_hermes_agent.guest:build"
_MEMORY_MARKS = ("register_memory_provider", "MemoryProvider")


class HermesAgentPlugins:
    """The plugin source (see :class:`~hermes_sdk.PluginSourceSpec`)."""

    def find(self, query: SourceQuery) -> list[ForeignPlugin]:
        found: dict[str, ForeignPlugin] = {}
        for plugin in [*_folders(query), *_entry_points(query)]:
            found.setdefault(plugin.name, plugin)  # a folder wins, as a user plugin does there
        return [found[name] for name in sorted(found)]


@dataclass(frozen=True)
class _Entry:
    """One entry point of a hermes-agent group, and its distribution's name and version."""

    group: str
    name: str
    value: str
    distribution: str
    version: str
    summary: str
    site: str  # the folder the distribution is installed in


def _installed_entries() -> Iterator[_Entry]:
    """Every entry point in a hermes-agent group, read from the ``*.dist-info`` folders on
    sys.path as text. ``importlib.metadata`` would build every distribution's metadata
    (~60 ms with ~200 packages, and ~16 ms more to import it); this reads each folder's
    ``entry_points.txt``, and the headers of ``METADATA`` only where one matches (~2 ms)."""
    seen: set[str] = set()
    for folder in sys.path:
        try:
            found = os.scandir(folder or ".")
        except OSError:
            continue
        with found:
            for entry in found:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                text = _read(os.path.join(entry.path, "entry_points.txt"))
                if text is None or "[hermes_agent." not in text:
                    continue
                headers = _headers(entry.path)
                name = headers.get("name", entry.name.split("-")[0])
                if name.lower() in seen:
                    continue  # the first on sys.path wins, as for imports
                seen.add(name.lower())
                for group, key, value in _sections(text):
                    if group.startswith("hermes_agent."):
                        yield _Entry(
                            group,
                            key,
                            value,
                            name,
                            headers.get("version", ""),
                            headers.get("summary", ""),
                            folder or ".",
                        )


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeError):
        return None


def _headers(dist_info: str) -> dict[str, str]:
    """Name, Version and Summary from METADATA (or an egg's PKG-INFO): its first lines."""
    found: dict[str, str] = {}
    text = _read(os.path.join(dist_info, "METADATA")) or _read(os.path.join(dist_info, "PKG-INFO"))
    for line in (text or "").splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        key, _, value = line.partition(":")
        if key.lower() in ("name", "version", "summary") and key.lower() not in found:
            found[key.lower()] = value.strip()
    return found


def _sections(text: str) -> Iterator[tuple[str, str, str]]:
    """(group, name, value) of an ``entry_points.txt`` (INI: ``[group]`` then ``name = value``)."""
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
        elif "=" in line and group:
            key, _, value = line.partition("=")
            yield group, key.strip(), value.strip()


def _entry_points(query: SourceQuery) -> Iterator[ForeignPlugin]:
    for entry in _installed_entries():
        if entry.group not in (GROUP, MEMORY_GROUP):
            continue
        name = hermes_name(entry.name)
        if name is None:
            log.warning(
                "hermes-agent plugin %r (entry point %s): not a name Hermes accepts; left out",
                entry.name[:64],
                entry.value,
            )
        elif query.wants(name):
            yield _from_entry_point(entry, name, entry.group == MEMORY_GROUP, query)


def _from_entry_point(entry: _Entry, name: str, memory: bool, query: SourceQuery) -> ForeignPlugin:
    where = Where(
        name,
        str(query.home),
        entry_point=entry.value,
        memory=memory,
        version=entry.version,
        description=entry.summary,
    )
    kind = "memory provider entry point" if memory else "entry point"
    module = entry.value.partition(":")[0].strip()
    shipped = Path(entry.site, *module.split("."))  # a plugin.yaml beside the package's code
    declares = _declared(name, memory, _manifest(shipped) if shipped.is_dir() else {})
    return ForeignPlugin(
        name=name,
        factory=FACTORY,
        argument=where.encode(),
        origin=f"hermes-agent {kind} {entry.value}",
        distribution=entry.distribution,
        version=entry.version,
        summary=entry.summary,
        declares=declares,
    )


def _declared(name: str, memory: bool, manifest: dict[str, object]) -> frozenset[tuple[Kind, str]]:
    """What a plugin provides, known before it loads: a memory provider, and a guard when
    its plugin.yaml lists ``pre_tool_call`` (if it then fails to load, its gate denies)."""
    declares: set[tuple[Kind, str]] = {(Kind.MEMORY, name)} if memory else set()
    hooks = manifest.get("provides_hooks") or manifest.get("hooks") or []
    if isinstance(hooks, list) and "pre_tool_call" in hooks:
        declares.add((Kind.HOOK, "hermes_tool_gate"))
    return frozenset(declares)


def _folders(query: SourceQuery) -> Iterator[ForeignPlugin]:
    root = query.home / "plugins"
    try:
        folders = sorted(path for path in root.iterdir() if path.is_dir())
    except OSError:
        return
    for folder in folders:
        if folder.name.startswith((".", "_")) or not (folder / "__init__.py").is_file():
            continue
        manifest = _manifest(folder)
        given = str(manifest.get("name") or folder.name)
        name = hermes_name(given)
        if name is None:
            log.warning(
                "hermes-agent plugin folder %s: its name %r is not one Hermes accepts "
                "(letters, digits, - and _); rename it to load it",
                folder,
                given[:64],
            )
            continue
        if not query.wants(name):
            continue
        memory = _is_memory(folder, manifest)
        version = str(manifest.get("version") or "")
        summary = str(manifest.get("description") or "")
        where = Where(
            name,
            str(query.home),
            folder=str(folder),
            memory=memory,
            version=version,
            description=summary,
        )
        yield ForeignPlugin(
            name=name,
            factory=FACTORY,
            argument=where.encode(),
            origin=f"hermes-agent {'memory provider ' if memory else ''}folder {folder}",
            distribution=f"{folder.name} (folder)",
            version=version or "-",
            summary=summary,
            declares=_declared(name, memory, manifest),
        )


def _manifest(folder: Path) -> dict[str, object]:
    """A folder's plugin.yaml ({} when it has none or it is unreadable: one line says so)."""
    names = [name for name in ("plugin.yaml", "plugin.yml") if (folder / name).is_file()]
    if not names:
        return {}
    import yaml  # only where there is one

    for file in names:
        try:
            data = yaml.safe_load((folder / file).read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, yaml.YAMLError) as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            problem = getattr(exc, "problem", None) or exc
            log.warning(
                "hermes-agent plugin folder %s: %s is unreadable (%s%s); it is known by its "
                "folder's name",
                folder,
                file,
                where,
                " ".join(str(problem).split()),
            )
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _is_memory(folder: Path, manifest: dict[str, object]) -> bool:
    kind = manifest.get("kind")
    if kind not in (None, "exclusive"):
        return False
    try:
        with (folder / "__init__.py").open(encoding="utf-8", errors="replace") as source:
            head = source.read(8192)
    except OSError:
        return False
    return kind == "exclusive" or any(mark in head for mark in _MEMORY_MARKS)
