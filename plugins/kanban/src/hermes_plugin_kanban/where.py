"""Which store holds the board: profiles of one home share it (they coordinate through it),
and homes whose store is one PostgreSQL database share it whatever their folders."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_plugin_kanban.board import Board
from hermes_plugin_kanban.schema import SCHEMA
from hermes_plugin_kanban.settings import KanbanConfig
from hermes_sdk.storage import Store, open_store

__all__ = ["BOARD_HOME_ENV", "board_home", "open_board", "profiles_of"]

BOARD_HOME_ENV = "HERMES_KANBAN_HOME"
"""Set by the dispatcher for its workers: the home whose store holds the board."""


def board_home(home: str | Path, settings: KanbanConfig) -> Path:
    """``kanban.board_home``, else $HERMES_KANBAN_HOME, else the home a profile belongs to
    (``HOME/profiles/NAME`` -> ``HOME``), else ``home``."""
    if settings.board_home:
        return Path(settings.board_home).expanduser()
    if os.environ.get(BOARD_HOME_ENV):
        return Path(os.environ[BOARD_HOME_ENV])
    path = Path(home)
    return path.parent.parent if path.parent.name == "profiles" else path


def profiles_of(home: str | Path) -> list[str]:
    """The profiles of a home, by name."""
    folder = Path(home) / "profiles"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "config.yaml").is_file() or p.is_dir())


def open_board(home: str | Path, settings: KanbanConfig) -> tuple[Board, Store]:
    """The board of ``home``, on a connection of its own (close the store)."""
    store = open_store(board_home(home, settings), SCHEMA)
    return Board(store), store
