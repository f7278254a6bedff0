"""Copy a home's state from one store to another (``hermes store migrate``): from the home's
own store into a shared database, or back. The target must be empty; both have the kernel's
tables at their engine's latest version (opening them migrates them), and each plugin's
tables are made in the target from the plugin's own schema (``hermes_store_schemas``) before
its rows are copied.

Rows are copied table by table in batches, in the order the tables were made (so a table is
filled before those that refer to it), with their ids: references between rows stay right,
and the target's engine moves its id counters past the copied ids at the end. Turn leases are
not copied (they belong to processes of the old store), nor an engine's search bookkeeping:
each engine indexes the text itself. Counts are compared at the end; the source is never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.plugin_store import migrate_schema
from hermes_sdk.storage import StoreSchema

KERNEL_TABLES = ("sessions", "messages", "model_calls", "compactions", "nested_calls")
"""The kernel's tables that hold state, in the order they refer to each other."""
BATCH_ROWS = 2_000


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int


def _count(db: StoreBackend, table: str) -> int:
    return int(db.query_value(f"SELECT count(*) FROM {table}") or 0)


def _rows(
    db: StoreBackend, table: str, columns: Sequence[str]
) -> Iterator[list[tuple[object, ...]]]:
    """The table's rows in batches, read as they are copied: by id where it has one (a
    million messages are never all in memory), else all at once (small tables: routes,
    pairings)."""
    listed = ", ".join(columns)
    if "id" not in columns:
        everything = db.query(f"SELECT {listed} FROM {table}")
        if everything:
            yield everything
        return
    at = list(columns).index("id")
    last = None
    while True:
        where = "" if last is None else "WHERE id > ? "
        batch = db.query(
            f"SELECT {listed} FROM {table} {where}ORDER BY id LIMIT {BATCH_ROWS}",
            () if last is None else (last,),
        )
        if not batch:
            return
        yield batch
        last = batch[-1][at]


def copy_table(source: StoreBackend, target: StoreBackend, table: str) -> int:
    """Copy every row of ``table`` (made in both already); how many."""
    wanted = set(target.columns(table))
    columns = [column for column in source.columns(table) if column in wanted]
    deferred = ["parent_session_id"] if table == "sessions" else []
    inserted = [column for column in columns if column not in deferred]
    statement = (
        f"INSERT INTO {table} ({', '.join(inserted)}) VALUES ({', '.join('?' for _ in inserted)})"
    )
    positions = [columns.index(column) for column in inserted]
    copied = 0
    for batch in _rows(source, table, columns):
        with target.write() as cursor:
            cursor.executemany(statement, [[row[i] for i in positions] for row in batch])
        copied += len(batch)
    if deferred:  # a parent may come after its child: links are made once all exist
        links = source.query(
            "SELECT id, parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL"
        )
        with target.write() as cursor:
            for session_id, parent in links:
                cursor.execute(
                    "UPDATE sessions SET parent_session_id = ? WHERE id = ?", (parent, session_id)
                )
    if "id" in columns:
        target.copied(table)  # new rows must get ids past the copied ones
    return copied


def transfer(
    source: StoreBackend,
    target: StoreBackend,
    schemas: Sequence[StoreSchema],
    progress: Callable[[Copied], None] = lambda _copied: None,
) -> list[Copied]:
    """Copy the kernel's tables and each schema's from ``source`` into ``target``."""
    check_empty(target, schemas)
    for schema in schemas:  # both at the installed plugins' versions: the same tables
        migrate_schema(source, schema)
        migrate_schema(target, schema)
    plan = list(KERNEL_TABLES)
    for schema in schemas:
        plan += [table for table in source.tables(f"{schema.name}_") if table not in plan]
    done: list[Copied] = []
    for table in plan:
        if not _exists(target, table):
            raise StoreError(
                f"{target.where} has no table {table} after the migrations of its plugin; "
                "upgrade the plugin, or disable it before copying"
            )
        copied = Copied(table, copy_table(source, target, table))
        if _count(target, table) != _count(source, table):
            raise StoreError(
                f"{table}: {_count(source, table)} rows in {source.where}, but "
                f"{_count(target, table)} arrived in {target.where}; nothing was switched"
            )
        done.append(copied)
        progress(copied)
    return done


def check_empty(target: StoreBackend, schemas: Sequence[StoreSchema]) -> None:
    """StoreError, before anything is written, if ``target`` holds state already."""
    held = [table for table in (*KERNEL_TABLES, *_plugin_tables(target, schemas)) if
            _exists(target, table) and _count(target, table)]  # fmt: skip
    if held:
        raise StoreError(
            f"{target.where} already holds state ({', '.join(held[:3])}); copy into an empty "
            "store (a new database, or move the old state.db aside)"
        )


def _plugin_tables(db: StoreBackend, schemas: Sequence[StoreSchema]) -> list[str]:
    return [table for schema in schemas for table in db.tables(f"{schema.name}_")]


def _exists(db: StoreBackend, table: str) -> bool:
    return table in db.tables(table)


def left_behind(source: StoreBackend, schemas: Sequence[StoreSchema]) -> list[str]:
    """Plugins' schemas in the source that no loaded plugin declared: their tables stay."""
    declared = {schema.name for schema in schemas}
    rows = source.query("SELECT name FROM plugin_schemas ORDER BY name")
    return [str(row[0]) for row in rows if str(row[0]) not in declared]
