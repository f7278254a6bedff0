"""Tables declared once, made by every store engine in its own SQL.

A plugin that keeps tables gives its :class:`~hermes_sdk.storage.StoreSchema` ``declared``
versions instead of SQL: each version a tuple of steps (a :class:`Table`, an :class:`Index`,
an :class:`AddColumn`), applied in order, once, in the transaction that records it::

    SCHEMA = StoreSchema(name="notes", declared=(
        (   # version 1
            Table("notes_items", (
                Column("id", ColumnType.ID),
                Column("text", ColumnType.TEXT, required=True),
                Column("made_at", ColumnType.REAL, required=True),
            )),
            Index("notes_items_by_time", "notes_items", ("made_at",)),
        ),
        (AddColumn("notes_items", Column("pinned", ColumnType.INTEGER, default=0)),),  # v2
    ))

Each store engine renders the steps with :func:`render` and its own column types (an ``ID``
is ``INTEGER PRIMARY KEY`` in SQLite, an identity in PostgreSQL), so the plugin runs on every
engine without writing its DDL twice. What a step holds as SQL (a ``check``, an index's
``where``, a ``default``) is the author's, in the SQL every engine shares, as the plugin's
queries are. Never change a released version: add one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

__all__ = [
    "AddColumn",
    "Column",
    "ColumnType",
    "Index",
    "Step",
    "Table",
    "render",
    "render_versions",
]


class ColumnType:
    """The types a declared column may have (plain strings: defining an enum, or a dataclass,
    costs a start-up that imports this a millisecond or more)."""

    ID = "id"
    """The table's integer key, given to a new row when none is: one per table."""
    TEXT = "text"
    INTEGER = "integer"
    """A 64-bit integer (a count, a flag, another row's id)."""
    REAL = "real"
    """A double-precision float (a time in seconds, an amount)."""


class Column(NamedTuple):
    name: str
    type: str
    """A :class:`ColumnType`."""
    required: bool = False
    """NOT NULL."""
    default: str | int | float | None = None
    """A number, or SQL text (``"'schedule'"`` for a string)."""
    primary_key: bool = False
    """The key of the table on its own (an ``ID`` column is one already)."""
    references: str | None = None
    """``"table(column)"``: a row of another table of yours."""
    on_delete: Literal["CASCADE", "SET NULL"] | None = None
    check: str | None = None
    """An SQL condition every row meets (``"state IN ('open', 'done')"``)."""


class Table(NamedTuple):
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    """A key of several columns."""
    unique: tuple[tuple[str, ...], ...] = ()
    """Sets of columns no two rows share."""


class Index(NamedTuple):
    name: str
    table: str
    columns: tuple[str, ...]
    where: str | None = None
    """A partial index: only the rows meeting this SQL condition."""
    unique: bool = False


class AddColumn(NamedTuple):
    table: str
    column: Column
    """A column added later: not an ``ID`` nor a primary key, and ``required`` only with a
    ``default`` (the rows already there need a value); :func:`check` says so."""


def check(step: Step) -> None:
    """ValueError, saying what to fix, for a step no engine can make."""
    if isinstance(step, Table):
        for column in step.columns:
            if column.type not in _TYPES:
                raise ValueError(f"{step.name}.{column.name}: unknown column type {column.type!r}")
    if isinstance(step, AddColumn):
        column = step.column
        if column.type not in _TYPES:
            raise ValueError(f"{step.table}.{column.name}: unknown column type {column.type!r}")
        if column.type == ColumnType.ID or column.primary_key:
            raise ValueError(f"{step.table}.{column.name}: a key cannot be added to a table")
        if column.required and column.default is None:
            raise ValueError(
                f"{step.table}.{column.name}: a required column added later needs a default"
            )


_TYPES = frozenset({ColumnType.ID, ColumnType.TEXT, ColumnType.INTEGER, ColumnType.REAL})


Step = Table | Index | AddColumn
"""One change of a declared version."""


def _default(value: str | int | float) -> str:
    return value if isinstance(value, str) else repr(value)


def _column(column: Column, types: Mapping[str, str]) -> str:
    parts = [column.name, types[column.type]]
    if column.primary_key:
        parts.append("PRIMARY KEY")
    if column.required and column.type != ColumnType.ID:
        parts.append("NOT NULL")
    if column.default is not None:
        parts.append(f"DEFAULT {_default(column.default)}")
    if column.check is not None:
        parts.append(f"CHECK ({column.check})")
    if column.references is not None:
        parts.append(f"REFERENCES {column.references}")
        if column.on_delete is not None:
            parts.append(f"ON DELETE {column.on_delete}")
    return " ".join(parts)


def render(step: Step, types: Mapping[str, str]) -> str:
    """``step`` as one SQL statement, with an engine's SQL for each column type (its ``ID``
    the whole key clause, such as ``INTEGER PRIMARY KEY``)."""
    if isinstance(step, Table):
        lines = [_column(column, types) for column in step.columns]
        if step.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(step.primary_key)})")
        lines += [f"UNIQUE ({', '.join(columns)})" for columns in step.unique]
        body = ",\n    ".join(lines)
        return f"CREATE TABLE {step.name} (\n    {body}\n)"
    if isinstance(step, Index):
        unique = "UNIQUE " if step.unique else ""
        where = f" WHERE {step.where}" if step.where else ""
        return (
            f"CREATE {unique}INDEX {step.name} ON {step.table} ({', '.join(step.columns)}){where}"
        )
    return f"ALTER TABLE {step.table} ADD COLUMN {_column(step.column, types)}"


def render_versions(
    versions: tuple[tuple[Step, ...], ...], types: Mapping[str, str]
) -> tuple[str, ...]:
    """Each declared version as one SQL script, for an engine's migrations."""
    return tuple(";\n".join(render(step, types) for step in version) for version in versions)
