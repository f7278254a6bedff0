"""Dashboard panels: a plugin's page in the web UI (and any front-end that draws them).

A plugin that owns something a person configures or watches (scheduled jobs, the gateway's
pairings, the skills hub) yields a :class:`~hermes_sdk.specs.DashboardPanelSpec` from
``hermes_dashboard_panels``. Its factory gets a :class:`PanelContext` and returns a
:class:`Panel`: ``view(query)`` says what the page shows as a small tree of typed blocks
(sections of tables, forms, facts, charts, text), and ``act(action, values)`` does what a
button or a form asked. The front-end draws the blocks, carries the CSRF token, and never
reads the plugin's files; the plugin never writes HTML::

    class Notes:
        def __init__(self, context):
            self.folder = Path(context.home) / "notes"

        async def view(self, query):
            rows = tuple(Row(cells=(p.name,), buttons=(Button(action="delete", label="Delete",
                         values={"name": p.name}, confirm=f"Delete {p.name}?"),))
                         for p in sorted(self.folder.glob("*.md")))
            return PanelView(sections=(Section(title="Notes", blocks=(
                Table(columns=("name",), rows=rows, empty="no notes yet"),
                Form(action="add", submit="Add", fields=(Field(name="name", label="Name"),)),
            )),))

        async def act(self, action, values):
            ...
            return Outcome(message="added a.md")

A panel's methods run on the front-end's event loop: blocking work goes to a thread
(``asyncio.to_thread``). An action's bad input raises :class:`PanelError` with one line
saying what to fix; the front-end shows it and keeps what the person typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hermes_sdk.provided import ProvidedSpecs
    from hermes_sdk.runtime import Runtime

__all__ = [
    "Actions",
    "Bar",
    "Bars",
    "Block",
    "Button",
    "Code",
    "Facts",
    "Field",
    "FieldKind",
    "Form",
    "Level",
    "LogLine",
    "LogTail",
    "Outcome",
    "Panel",
    "PanelContext",
    "PanelError",
    "PanelInfo",
    "PanelView",
    "Row",
    "Section",
    "Table",
    "TailChunk",
    "TailingPanel",
    "Text",
]

Level = Literal["info", "ok", "warn", "error"]
FieldKind = Literal["text", "number", "bool", "choice", "secret", "textarea", "hidden"]


class PanelError(ValueError):
    """An action refused, with one line saying what to fix (shown beside the form). What
    the person typed is put back in the form, unless ``keep_typed=False`` (a form that
    may hold a secret in the wrong box)."""

    def __init__(self, message: str, *, keep_typed: bool = True) -> None:
        super().__init__(message)
        self.keep_typed = keep_typed


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One input of a :class:`Form`. ``value`` is the text shown in it (a secret's is never
    sent back: the front-end shows ``placeholder`` instead); ``bool`` fields send ``"true"``
    when ticked and ``"false"`` otherwise."""

    name: str
    label: str
    kind: FieldKind = "text"
    value: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()
    required: bool = False
    placeholder: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Button:
    """An action in one click: ``act(action, values)``; with ``confirm``, asked first. With
    ``navigate=True`` it is a link instead: the panel's ``view`` with ``values`` as the
    query (open a job to edit it, filter a list)."""

    action: str
    label: str
    values: Mapping[str, str] = field(default_factory=dict)
    confirm: str = ""
    danger: bool = False
    navigate: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Actions:
    """Buttons in a row, outside any table (start, stop, restart)."""

    buttons: tuple[Button, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Form:
    """Fields sent together to ``act(action, values)``."""

    action: str
    fields: tuple[Field, ...]
    submit: str
    title: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """A table row: its cells as text, its buttons, and an optional ``detail`` folded under
    it (a diff, a log, a description), drawn as preformatted text."""

    cells: tuple[str, ...]
    buttons: tuple[Button, ...] = ()
    detail: str = ""
    level: Level | None = None
    """Marks the row: ``ok`` (green), ``warn``, ``error``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    empty: str = "nothing yet"
    """What to say when there are no rows."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Facts:
    """Label and value pairs (``model: gpt-5``)."""

    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    text: str
    level: Level = "info"


@dataclass(frozen=True, slots=True, kw_only=True)
class Code:
    """Preformatted text; ``diff`` colours a unified diff's lines."""

    text: str
    kind: Literal["text", "diff"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class Bar:
    label: str
    value: float
    text: str
    """The value as a person reads it (``12,400 tokens``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bars:
    """A bar chart, drawn on the server (no script, no external resource)."""

    title: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LogTail:
    """Live lines: the page asks the panel's ``tail`` for what came after its cursor, every
    second or so, with the values of ``filters`` (fields) as the query."""

    filters: tuple[Field, ...] = ()


Block = Table | Form | Facts | Text | Code | Bars | LogTail | Actions


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PanelView:
    sections: tuple[Section, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What an action did: one line to show. With ``view``, the front-end shows that instead
    of the panel (a preview with a button that confirms it: a config change's diff); such an
    action must change nothing, since a reload of the preview asks it again. Otherwise the
    browser is sent on to the panel's view (with ``query``), so a reload never repeats it."""

    message: str
    ok: bool = True
    view: PanelView | None = None
    query: Mapping[str, str] | None = None
    """Where to go next: the panel's view with this query (a search's results)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogLine:
    text: str
    level: str = ""
    component: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TailChunk:
    """The lines after a cursor, and the cursor to ask with next (opaque to the caller)."""

    lines: tuple[LogLine, ...]
    cursor: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PanelContext:
    """What a panel's factory gets: the home, its config and secrets (from .env: the panel
    shows none of them in full), the runtime of the front-end that draws it, and what the
    plugins provide (the skills plugin lists the folders other plugins add)."""

    home: str
    config: Mapping[str, Any]
    secrets: Mapping[str, str] = field(repr=False)
    runtime: Runtime
    provided: ProvidedSpecs


@dataclass(frozen=True, slots=True, kw_only=True)
class PanelInfo:
    """A panel as a front-end lists it, known without building it."""

    name: str
    title: str
    description: str
    plugin: str
    order: int


@runtime_checkable
class Panel(Protocol):
    async def view(self, query: Mapping[str, str]) -> PanelView:
        """What the page shows; ``query`` is the page's query string (filters, an item).
        It changes nothing: any link (another site's too) may ask for it."""
        ...

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        """Do ``action`` (a button's or a form's) with its ``values``; raise
        :class:`PanelError` (one line) for input to fix."""
        ...


@runtime_checkable
class TailingPanel(Panel, Protocol):
    """A panel with a :class:`LogTail` block."""

    async def tail(self, cursor: str, query: Mapping[str, str]) -> TailChunk:
        """The lines after ``cursor`` (``""``: the last few) that match ``query``."""
        ...
