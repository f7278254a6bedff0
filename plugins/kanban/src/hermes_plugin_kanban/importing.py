"""``hermes import``: hermes-agent's boards come over (``kanban.db`` for its default board,
``kanban/boards/SLUG/kanban.db`` for the others): tasks with their ids, statuses,
assignees, priorities and results, the links between them, comments, runs, events and
attachments (their files copied). Only the source is read, from a copy of each database;
a task already here stays as it is. A task hermes-agent was running is brought over ready:
its worker is gone."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from hermes_commons.sqlite_copy import UnreadableDatabase, readable_copy
from hermes_plugin_kanban.attachments import free_path
from hermes_plugin_kanban.board import DEFAULT_BOARD, TASK_ID, event_in, promote_in
from hermes_plugin_kanban.schema import SCHEMA, STATUSES
from hermes_plugin_kanban.settings import settings_from
from hermes_plugin_kanban.where import board_home
from hermes_sdk.importing import HomeImport, ImportSection
from hermes_sdk.storage import Store, StoreCursor, StoreError, open_store

__all__ = ["import_board"]

KIND = "kanban tasks"


def _sources(home: Path) -> list[tuple[str, str, Path]]:
    """(slug, name, database) of each board of a hermes-agent home."""
    found = []
    if (home / "kanban.db").is_file():
        found.append((DEFAULT_BOARD, "Default", home / "kanban.db"))
    boards = home / "kanban" / "boards"
    if boards.is_dir():
        for folder in sorted(boards.iterdir()):
            if folder.name.startswith("_") or folder.name == DEFAULT_BOARD:
                continue
            database = folder / "kanban.db"
            if database.is_file():
                name = folder.name
                with suppress(OSError, ValueError):
                    name = json.loads((folder / "board.json").read_text()).get("name") or name
                found.append((folder.name, str(name), database))
    return found


def _rows(source: sqlite3.Connection, table: str, columns: str, where: str = "") -> list[Any]:
    try:
        return source.execute(f"SELECT {columns} FROM {table} {where}").fetchall()
    except sqlite3.OperationalError:  # a table an older release did not have
        return []


def _at(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def import_board(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["kanban.db", "kanban"])
    sources = _sources(Path(request.source))
    if not sources:
        return section
    try:
        settings = settings_from(request.config.get("kanban"))
        target = board_home(request.target, settings)
        if target.resolve().is_relative_to(Path(request.source).resolve()):
            raise ValueError(f"the board would be kept in {target}, inside the imported home")
        store = None if request.dry_run else open_store(target, SCHEMA)
    except (ValueError, StoreError) as exc:
        section.left("kanban.db", f"{exc}: fix it, then import again")
        return section
    try:
        for slug, name, database in sources:
            try:
                with readable_copy(database) as source:
                    _import_one(source, Path(request.source), slug, name, store, target, section)
            except UnreadableDatabase as exc:
                section.left(str(database.relative_to(request.source)), str(exc))
    finally:
        if store is not None:
            store.close()
    return section


def _import_one(
    source: sqlite3.Connection,
    home: Path,
    slug: str,
    name: str,
    store: Store | None,
    target: Path,
    section: ImportSection,
) -> None:
    tasks = _rows(
        source,
        "tasks",
        "id, title, body, assignee, status, priority, created_by, created_at, started_at, "
        "completed_at, result",
    )
    if store is None:  # a dry run: say what would come
        for task in tasks:
            section.add(f"{task[0]} ({slug}): {task[1]}")
        return
    known = {str(row[0]) for row in store.query("SELECT id FROM kanban_tasks")}
    new = []
    for task in tasks:
        if str(task[0]) in known:
            section.skip(f"{task[0]}: {task[1]}", "already on the board")
        elif not TASK_ID.fullmatch(str(task[0])):
            section.left(f"{task[0]!r}: {task[1]}", "its id cannot name a folder of ours")
        else:
            new.append(task)
    if not new:
        return
    ids = {str(task[0]) for task in new}
    copies = _copy_attachments(source, ids, home, target, section)  # before: no lock held
    with store.write() as cursor:
        if slug != DEFAULT_BOARD:
            cursor.execute(
                "INSERT INTO kanban_boards (slug, name, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT (slug) DO NOTHING",
                (slug, name, time.time()),
            )
        for task in new:
            _task_in(cursor, slug, task, section)
        for parent, child in _rows(source, "task_links", "parent_id, child_id"):
            if str(child) in ids:
                cursor.execute(
                    "INSERT INTO kanban_links (parent_id, child_id) VALUES (?, ?) "
                    "ON CONFLICT (parent_id, child_id) DO NOTHING",
                    (str(parent), str(child)),
                )
        for task_id, author, body, at in _rows(
            source, "task_comments", "task_id, author, body, created_at", "ORDER BY id"
        ):
            if str(task_id) in ids:
                cursor.execute(
                    "INSERT INTO kanban_comments (task_id, author, body, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (str(task_id), str(author), str(body), _at(at) or time.time()),
                )
        runs = _runs_in(cursor, source, ids)
        for task_id, run_id, kind, payload, at in _rows(
            source, "task_events", "task_id, run_id, kind, payload, created_at", "ORDER BY id"
        ):
            if str(task_id) in ids:
                cursor.execute(
                    "INSERT INTO kanban_events (task_id, run_id, kind, payload, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (str(task_id), runs.get(run_id), str(kind), payload, _at(at) or time.time()),
                )
        for task_id in sorted(ids):
            event_in(cursor, task_id, "imported", {"from": "hermes-agent", "board": slug})
            promote_in(cursor, task_id)  # a todo whose parents are done (or not here)
        for row in copies:
            cursor.execute(
                "INSERT INTO kanban_attachments (task_id, filename, path, size, added_by, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )


def _task_in(cursor: StoreCursor, slug: str, task: Any, section: ImportSection) -> None:
    task_id, title, body, assignee, status, priority = task[:6]
    created_by, created_at, started_at, completed_at, result = task[6:]
    status = str(status)
    if status not in STATUSES:
        section.note(f"{task_id}: status {status!r} is not one of ours; brought over as todo")
        status = "todo"
    if status == "running":  # its worker was hermes-agent's: gone
        section.note(f"{task_id} was running in hermes-agent: brought over ready for a worker")
        status = "ready"
    created = _at(created_at) or time.time()
    cursor.execute(
        "INSERT INTO kanban_tasks (id, board, title, body, status, assignee, priority, "
        "created_by, created_at, updated_at, started_at, completed_at, result) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            str(task_id),
            slug,
            str(title),
            body,
            status,
            assignee,
            int(priority or 0),
            created_by,
            created,
            created,
            _at(started_at),
            _at(completed_at),
            result,
        ),
    )
    section.add(f"{task_id} ({slug}): {title}")


def _runs_in(cursor: StoreCursor, source: sqlite3.Connection, ids: set[str]) -> dict[Any, int]:
    """The runs, with their ids here by their ids there."""
    found: dict[Any, int] = {}
    for run in _rows(
        source,
        "task_runs",
        "id, task_id, profile, status, started_at, ended_at, outcome, summary, error",
        "ORDER BY id",
    ):
        run_id, task_id, profile, status, started, ended, outcome, summary, error = run
        if str(task_id) not in ids:
            continue
        if ended is None:  # hermes-agent's worker never finished it
            ended, outcome, error = time.time(), "reclaimed", "imported: its worker is gone"
        rows = cursor.execute(
            "INSERT INTO kanban_runs (task_id, profile, status, started_at, ended_at, outcome, "
            "summary, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                str(task_id),
                profile,
                str(status or "ended"),
                _at(started) or time.time(),
                _at(ended),
                outcome,
                summary,
                error,
            ),
        ).fetchall()
        found[run_id] = int(rows[0][0])
    return found


def _copy_attachments(
    source: sqlite3.Connection,
    ids: set[str],
    home: Path,
    target: Path,
    section: ImportSection,
) -> list[tuple[Any, ...]]:
    """Copy the new tasks' attached files from the hermes-agent home (only from inside it:
    ``HOME/kanban/attachments/TASK/``, or where a row says inside the home); the rows to
    insert for them."""
    inside = home.resolve()
    rows = []
    for task_id, filename, stored, size, by, at in _rows(
        source,
        "task_attachments",
        "task_id, filename, stored_path, size, uploaded_by, created_at",
        "ORDER BY id",
    ):
        if str(task_id) not in ids:
            continue
        name = Path(str(filename)).name
        what = f"{task_id}: {filename}"
        found = home / "kanban" / "attachments" / str(task_id) / Path(str(stored)).name
        if not found.is_file():  # the path it recorded, if that is inside the home
            found = Path(str(stored))
        if name in ("", ".", "..") or not found.resolve().is_relative_to(inside):
            section.left(what, "not a file inside the imported home: not read")
            continue
        folder = target / "kanban" / "attachments" / str(task_id)
        try:
            copy = free_path(folder, name)
            shutil.copyfile(found, copy)
        except OSError as exc:
            section.left(what, f"the file could not be copied: {exc.strerror or exc}")
            continue
        at_time = _at(at) or time.time()
        rows.append((str(task_id), name, str(copy), int(size or 0), by, at_time))
    return rows
