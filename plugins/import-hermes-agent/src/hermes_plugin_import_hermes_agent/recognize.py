"""A hermes-agent home met by accident (HERMES_HOME pointing at it): recognised by keys only
its config.yaml has, or by its state.db, so that every Hermes command says in one line what it
is and how to import it (``Importer.recognize``)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["hermes_agent_evidence", "hermes_agent_keys", "read_schema"]

_MARKER_KEYS: tuple[tuple[str, ...], ...] = (
    ("_config_version",),
    ("custom_providers",),
    ("fallback_model",),
    ("command_allowlist",),
    ("platform_toolsets",),
    ("smart_model_routing",),
    ("terminal", "backend"),
    ("terminal", "docker_image"),
    ("terminal", "ssh_host"),
    ("memory", "memory_enabled"),
    ("memory", "memory_char_limit"),
    ("memory", "user_char_limit"),
    ("agent", "max_turns"),
)
"""Keys only hermes-agent's config.yaml has (Hermes spells these settings differently)."""


def hermes_agent_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of ``data`` (a parsed config.yaml) that only hermes-agent writes; empty
    unless they make it clear (its version key, or two of them: one could be a guess)."""
    found = []
    for path in _MARKER_KEYS:
        node: Any = data
        for part in path:
            node = node.get(part) if isinstance(node, Mapping) else None
            if node is None:
                break
        else:
            found.append(".".join(path))
    if isinstance(data.get("model"), str):
        found.append("model (a plain string)")
    return found if "_config_version" in found or len(found) >= 2 else []


def _config_keys(home: Path) -> list[str]:
    import yaml

    try:
        data = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    return hermes_agent_keys(data) if isinstance(data, Mapping) else []


def read_schema(state_db: Path) -> tuple[int, set[str]] | None:
    """``state_db``'s ``user_version`` and table names, or None if it is not a database.
    Opened immutable: no lock taken, no file made."""
    import sqlite3
    from urllib.parse import quote

    try:
        with contextlib.closing(
            sqlite3.connect(f"file:{quote(str(state_db))}?mode=ro&immutable=1", uri=True)
        ) as connection:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            return version, {str(row[0]) for row in rows}
    except sqlite3.DatabaseError:
        return None


def _state_db_is_theirs(state_db: Path) -> bool:
    """hermes-agent's state.db: its tables (its schema bookkeeping, its sessions), and no
    version of Hermes's (Hermes records its own in PRAGMA user_version)."""
    schema = read_schema(state_db)
    return (
        schema is not None and schema[0] == 0 and bool(schema[1] & {"schema_version", "sessions"})
    )


def hermes_agent_evidence(home: Path) -> str | None:
    """Why ``home`` is a hermes-agent home, in a few words, or None."""
    keys = _config_keys(home)
    if keys:
        return f"its config.yaml has hermes-agent's keys {', '.join(keys[:4])}"
    if (home / "state.db").is_file() and _state_db_is_theirs(home / "state.db"):
        return "state.db is hermes-agent's"
    return None
