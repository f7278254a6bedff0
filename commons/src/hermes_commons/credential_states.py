"""How each credential of a pool is doing, across processes: a key a chat saw rate-limited
is skipped by the next command too, and ``hermes auth list`` shows it. Kept in
``HERMES_HOME/cache/credential_states.json`` by variable name (never a key), written
atomically under a lock."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout

__all__ = ["clear", "note", "states"]

FILE = Path("cache") / "credential_states.json"
_LOCK = Path("locks") / "credential_states.lock"


def states(home: Path | str) -> dict[str, dict[str, dict[str, Any]]]:
    """endpoint -> variable -> ``{"state", "until" (epoch), "reason"}``; past ones dropped."""
    try:
        data = json.loads((Path(home) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    now = time.time()
    return {
        str(endpoint): {
            str(name): dict(state)
            for name, state in names.items()
            if isinstance(state, Mapping) and _until(state) > now
        }
        for endpoint, names in (data.items() if isinstance(data, dict) else ())
        if isinstance(names, Mapping)
    }


def _until(state: Mapping[str, Any]) -> float:
    """When a state ends; a value that is not a time ends it now."""
    try:
        return float(state.get("until") or 0)
    except (TypeError, ValueError):
        return 0.0


def _change(
    home: Path | str, endpoint: str, name: str | None, state: dict[str, Any] | None
) -> None:
    try:
        with FileLock(Path(home) / _LOCK, timeout=5):
            known = states(home)
            names = known.setdefault(endpoint, {})
            if name is None:
                names.clear()
            elif state is None:
                names.pop(name, None)
            else:
                names[name] = state
            text = json.dumps({k: v for k, v in known.items() if v}, indent=1)
            atomic_write_text(Path(home) / FILE, text + "\n", mode=0o600, sync=False)
    except (OSError, LockTimeout):
        pass  # a state not kept costs a retry in another process, never a turn


def note(home: Path | str, endpoint: str, name: str, state: str, until: float, reason: str) -> None:
    """``name`` (a variable) is ``state`` ("cooling down", "exhausted" ...) until ``until``."""
    _change(home, endpoint, name, {"state": state, "until": until, "reason": reason})


def clear(home: Path | str, endpoint: str, name: str | None = None) -> None:
    """Forget one credential's state, or (no ``name``) the whole pool's."""
    _change(home, endpoint, name, None)
