"""Which store holds the board: profiles of one home share it (they coordinate through it),
and homes whose store is one PostgreSQL database share it whatever their folders."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_plugin_kanban.board import Board
from hermes_plugin_kanban.schema import SCHEMA
from hermes_plugin_kanban.settings import KanbanConfig
from hermes_sdk.storage import Store, open_store

__all__ = ["BOARD_HOME_ENV", "board_home", "open_board", "profile_of", "profiles_of"]

BOARD_HOME_ENV = "HERMES_TASK_BOARD_HOME"
"""Set by the dispatcher for its workers: the home whose store holds the board. (Not
hermes-agent's ``HERMES_KANBAN_HOME``, which names its own board's folder.)"""


def _base_of(path: Path) -> Path | None:
    """The home a profile home (``HOME/profiles/NAME``) belongs to, or None."""
    if path.parent.name != "profiles":
        return None
    base = path.parent.parent
    is_home = (base / "config.yaml").exists() or (base / "state.db").exists()
    return base if is_home else None


def board_home(home: str | Path, settings: KanbanConfig) -> Path:
    """$HERMES_TASK_BOARD_HOME (set for workers), else ``kanban.board_home``, else the home a
    profile belongs to, else ``home``."""
    if os.environ.get(BOARD_HOME_ENV):  # a worker: the board its dispatcher runs
        return Path(os.environ[BOARD_HOME_ENV])
    if settings.board_home:
        return Path(settings.board_home).expanduser()
    path = Path(home)
    return _base_of(path) or path


def profile_of(home: str | Path) -> str:
    """The profile a home is (``default`` for a home that is no profile)."""
    path = Path(home)
    return path.name if _base_of(path) is not None else "default"


def profiles_of(home: str | Path) -> list[str]:
    """The profiles of a home, by name."""
    folder = Path(home) / "profiles"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def open_board(home: str | Path, settings: KanbanConfig) -> tuple[Board, Store]:
    """The board of ``home``, on a connection of its own (close the store)."""
    store = open_store(board_home(home, settings), SCHEMA)
    return Board(store), store
