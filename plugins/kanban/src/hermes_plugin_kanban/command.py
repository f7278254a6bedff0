"""``hermes kanban``: the board from the terminal."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from hermes_commons.text import one_line
from hermes_plugin_kanban.attachments import free_path
from hermes_plugin_kanban.board import DEFAULT_BOARD, TASK_ID, Board, KanbanError, Task
from hermes_plugin_kanban.settings import KanbanConfig, settings_from
from hermes_plugin_kanban.where import board_home, open_board, profile_of
from hermes_sdk import Kind
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.storage import StoreError

__all__ = ["kanban"]

T = TypeVar("T")
ATTACHMENT_BYTES = 25 * 1024 * 1024


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def _settings() -> KanbanConfig:
    try:
        return settings_from(_context().config.get("kanban"))
    except ValueError as exc:
        raise click.ClickException(f"config.yaml: {exc}") from None


@contextmanager
def _board() -> Iterator[Board]:
    try:
        board, store = open_board(_context().home, _settings())
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        yield board
    finally:
        store.close()


def _do(action: Callable[[Board], T]) -> T:
    with _board() as board:
        try:
            return action(board)
        except (KanbanError, StoreError) as exc:
            raise click.ClickException(str(exc)) from None


def _me() -> str:
    """Who is acting: this profile's name, or ``user`` at the home itself."""
    profile = profile_of(_context().home)
    return "user" if profile == "default" else profile


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def _line(task: Task) -> str:
    who = task.assignee or "(anyone)"
    return f"{task.id}  {task.status:<9} p{task.priority:<2} {who:<12} {one_line(task.title, 70)}"


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=1, default=str))


board_option = click.option("--board", "-b", default=DEFAULT_BOARD, show_default=True)


@click.group()
def kanban() -> None:
    """The team's task board: tasks that profiles claim, work on and complete."""


@kanban.command()
def init() -> None:
    """Make the board's tables (every command does; this says where they are)."""
    with _board() as board:
        count = len(board.tasks(None))
    where = board_home(_context().home, _settings())
    click.echo(f"the board is in the store of {where} ({count} tasks)")
    click.echo("the gateway's dispatcher hands ready tasks to idle profiles: hermes gateway run")


@kanban.group()
def boards() -> None:
    """Boards: list them, or make another."""


@boards.command("list")
def boards_list() -> None:
    for slug, name, count in _do(lambda board: board.boards()):
        click.echo(f"{slug:<16} {count:>4} tasks  {name}")


@boards.command("create")
@click.argument("slug")
@click.option("--name")
@click.option("--description")
def boards_create(slug: str, name: str | None, description: str | None) -> None:
    _do(lambda board: board.create_board(slug, name, description))
    click.echo(f"made board {slug}")


@kanban.command()
@click.argument("title")
@click.option("--body", help="What to do, in detail.")
@click.option("--assignee", "-a", help="The profile that must do it (unset: any worker).")
@click.option("--priority", "-p", type=int, default=0, show_default=True)
@click.option("--parent", "parents", multiple=True, help="A task this one waits for.")
@click.option("--due", type=float, help="When it is due (seconds since the epoch).")
@click.option("--triage", is_flag=True, help="Park it in triage: not dispatched.")
@click.option("--notify", "notify", multiple=True, help="PLATFORM:CHAT to tell of changes.")
@click.option("--json", "as_json", is_flag=True)
@board_option
def create(
    title: str,
    body: str | None,
    assignee: str | None,
    priority: int,
    parents: tuple[str, ...],
    due: float | None,
    triage: bool,
    notify: tuple[str, ...],
    as_json: bool,
    board: str,
) -> None:
    """Add a task."""
    chats = [_chat(target) for target in notify]

    def make(found: Board) -> Task:
        task = found.create(
            title,
            board=board,
            body=body,
            assignee=assignee,
            priority=priority,
            parents=parents,
            created_by=_me(),
            due_at=due,
            triage=triage,
        )
        for platform, chat_id in chats:
            found.subscribe(task.id, platform, chat_id)
        return task

    task = _do(make)
    if as_json:
        _echo_json(task.as_dict())
        return
    click.echo(f"created {task.id} ({task.status}, {task.assignee or 'any worker'})")


def _chat(target: str) -> tuple[str, str]:
    platform, _, chat_id = target.partition(":")
    if not platform or not chat_id:
        raise click.ClickException(f"--notify {target!r}: write it PLATFORM:CHAT (telegram:42)")
    return platform, chat_id


@kanban.command("list")
@click.option("--status", "-s")
@click.option("--assignee", "-a")
@click.option("--archived", is_flag=True, help="Archived tasks too.")
@click.option("--all-boards", is_flag=True)
@click.option("--json", "as_json", is_flag=True)
@board_option
def list_tasks(
    status: str | None,
    assignee: str | None,
    archived: bool,
    all_boards: bool,
    as_json: bool,
    board: str,
) -> None:
    """Tasks, by priority then age."""
    found = _do(
        lambda b: b.tasks(
            None if all_boards else board, status=status, assignee=assignee, archived=archived
        )
    )
    if as_json:
        _echo_json([task.as_dict() for task in found])
        return
    if not found:
        click.echo("no tasks: hermes kanban create TITLE adds one")
    for task in found:
        click.echo(_line(task))


@kanban.command()
@click.argument("task_id")
@click.option("--json", "as_json", is_flag=True)
def show(task_id: str, as_json: bool) -> None:
    """A task with its links, comments, attachments, runs and events."""

    def read(board: Board) -> dict[str, Any]:
        return {
            "task": board.task(task_id).as_dict(),
            "parents": board.parents(task_id),
            "children": board.children(task_id),
            "comments": board.comments(task_id),
            "attachments": board.attachments(task_id),
            "runs": [_run_dict(run) for run in board.runs(task_id)],
            "events": [
                {"kind": e.kind, "payload": e.payload, "at": e.created_at, "run": e.run_id}
                for e in board.events(task_id)
            ],
        }

    found = _do(read)
    if as_json:
        _echo_json(found)
        return
    task = found["task"]
    click.echo(f"{task['id']}: {task['title']}")
    click.echo(
        f"  {task['status']}; assignee {task['assignee'] or '(anyone)'}; priority "
        f"{task['priority']}; board {task['board']}; created {_when(task['created_at'])}"
    )
    if task["block_reason"]:
        click.echo(f"  blocked: {task['block_reason']}")
    if task["body"]:
        click.echo(f"\n{task['body']}")
    if task["result"]:
        click.echo(f"\nresult: {task['result']}")
    if found["parents"] or found["children"]:
        click.echo(f"\nwaits for: {', '.join(found['parents']) or '-'}")
        click.echo(f"then: {', '.join(found['children']) or '-'}")
    for author, body, at in found["comments"]:
        click.echo(f"\n{author} ({_when(at)}): {body}")
    for number, name, path, size in found["attachments"]:
        click.echo(f"attachment {number}: {name} ({size:,} bytes) {path}")
    if found["runs"]:
        click.echo("\nruns:")
    for run in found["runs"]:
        said = run["error"] or run["summary"] or ""
        click.echo(
            f"  {run['id']}: {run['profile'] or '?'} {run['outcome'] or run['status']} "
            f"{_when(run['started_at'])}-{_when(run['ended_at'])} {one_line(said, 80)}"
        )
    click.echo("\nevents:")
    for event in found["events"]:
        click.echo(f"  {_when(event['at'])} {event['kind']} {_short(event['payload'])}")


def _run_dict(run: Any) -> dict[str, Any]:
    return {name: getattr(run, name) for name in run.__slots__}


def _short(payload: dict[str, Any]) -> str:
    return one_line(", ".join(f"{k}={v}" for k, v in payload.items() if v is not None), 100)


@kanban.command()
@click.argument("task_id")
@click.argument("profile")
def assign(task_id: str, profile: str) -> None:
    """Give a task to a profile ('none': any worker)."""
    who = None if profile.lower() in ("none", "-", "anyone") else profile
    task = _do(lambda board: board.assign(task_id, who))
    click.echo(f"{task.id} goes to {task.assignee or 'any worker'}")


@kanban.command()
@click.argument("task_id")
@click.argument("text", nargs=-1, required=True)
@click.option("--author")
def comment(task_id: str, text: tuple[str, ...], author: str | None) -> None:
    _do(lambda board: board.comment(task_id, author or _me(), " ".join(text)))
    click.echo(f"commented on {task_id}")


@kanban.command()
@click.argument("task_id")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", help="The name it is shown by (default: the file's).")
def attach(task_id: str, path: Path, name: str | None) -> None:
    """Attach a file: copied into the board's attachments folder."""
    size = path.stat().st_size
    if size > ATTACHMENT_BYTES:
        raise click.ClickException(f"{path}: {size:,} bytes; at most {ATTACHMENT_BYTES:,}")
    shown = Path(name or path.name).name
    if shown in ("", ".", ".."):
        raise click.ClickException(f"--name {name!r}: give the file a name")
    task = _do(lambda board: board.task(task_id))
    folder = board_home(_context().home, _settings()) / "kanban" / "attachments" / task.id
    target = free_path(folder, shown)
    shutil.copyfile(path, target)
    number = _do(lambda board: board.attach(task_id, shown, str(target), size, _me()))
    click.echo(f"attached {shown} to {task_id} (attachment {number})")


@kanban.command()
@click.argument("task_id")
@click.argument("reason", nargs=-1, required=True)
def block(task_id: str, reason: tuple[str, ...]) -> None:
    """Park a task until someone unblocks it, saying why."""
    task = _do(lambda board: board.block(task_id, " ".join(reason), _me()))
    click.echo(f"{task.id} is blocked")


@kanban.command()
@click.argument("task_ids", nargs=-1, required=True)
def unblock(task_ids: tuple[str, ...]) -> None:
    for task_id in task_ids:
        task = _do(lambda board, t=task_id: board.unblock(t, _me()))  # type: ignore[misc]
        click.echo(f"{task.id} is {task.status}")


@kanban.command()
@click.argument("task_ids", nargs=-1, required=True)
@click.option("--summary", "-m", help="What was done: the task's result.")
def complete(task_ids: tuple[str, ...], summary: str | None) -> None:
    for task_id in task_ids:
        _do(lambda board, t=task_id: board.complete(t, summary, by=_me()))  # type: ignore[misc]
        click.echo(f"{task_id} is done")


@kanban.command()
@click.argument("task_ids", nargs=-1, required=True)
def archive(task_ids: tuple[str, ...]) -> None:
    for task_id in task_ids:
        _do(lambda board, t=task_id: board.archive(t))  # type: ignore[misc]
        click.echo(f"{task_id} is archived")


@kanban.command()
@click.argument("parent_id")
@click.argument("child_id")
def link(parent_id: str, child_id: str) -> None:
    """CHILD waits for PARENT to be done."""
    _do(lambda board: board.link(parent_id, child_id))
    click.echo(f"{child_id} waits for {parent_id}")


@kanban.command()
@click.argument("parent_id")
@click.argument("child_id")
def unlink(parent_id: str, child_id: str) -> None:
    _do(lambda board: board.unlink(parent_id, child_id))
    click.echo(f"{child_id} no longer waits for {parent_id}")


@kanban.command()
@click.argument("task_id")
@click.option("--reason", default="taken back by hand", show_default=True)
def reclaim(task_id: str, reason: str) -> None:
    """Take a running task back from its worker: ready for another."""
    _do(lambda board: board.reclaim(task_id, reason))
    click.echo(f"{task_id} is ready again")


@kanban.command()
@click.argument("task_id")
@click.argument("target")
def subscribe(task_id: str, target: str) -> None:
    """Tell PLATFORM:CHAT when the task is done, blocked, given up or taken back."""
    platform, chat_id = _chat(target)
    _do(lambda board: board.subscribe(task_id, platform, chat_id))
    click.echo(f"{platform}:{chat_id} hears about {task_id}")


@kanban.command()
@click.argument("task_id")
@click.argument("target")
def unsubscribe(task_id: str, target: str) -> None:
    platform, chat_id = _chat(target)
    if not _do(lambda board: board.unsubscribe(task_id, platform, chat_id)):
        raise click.ClickException(f"{target} was not subscribed to {task_id}")
    click.echo(f"{target} no longer hears about {task_id}")


@kanban.command()
@click.argument("task_id", required=False)
@click.option("--interval", type=float, default=1.0, show_default=True)
@click.option("--once", is_flag=True, help="Print what happened so far, then stop.")
def watch(task_id: str | None, interval: float, once: bool) -> None:
    """Follow the board's events (or one task's) as they happen; Ctrl+C stops."""
    after = 0
    try:
        while True:
            events = _do(lambda board, since=after: board.events(task_id, after=since))  # type: ignore[misc]
            for event in events:
                click.echo(
                    f"{_when(event.created_at)} {event.task_id} {event.kind} "
                    f"{_short(event.payload)}"
                )
                after = event.id
            if once:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        return


kanban.add_command(watch, "tail")


@kanban.command()
@click.option("--json", "as_json", is_flag=True)
@board_option
def stats(as_json: bool, board: str) -> None:
    """Tasks by status and by assignee, and how long the oldest ready one waits."""
    found = _do(lambda b: b.stats(board))
    if as_json:
        _echo_json(found)
        return
    click.echo("  ".join(f"{k} {v}" for k, v in found["by_status"].items() if v))
    for who, count in sorted(found["by_assignee"].items()):
        click.echo(f"  {who}: {count} open")
    if found["oldest_ready_seconds"] is not None:
        click.echo(f"the oldest ready task waits for {found['oldest_ready_seconds']} s")


def _worker_toolsets(context: CommandContext) -> tuple[str, ...]:
    """A worker's toolsets: the profile's (``agent.toolsets``, else every toolset not opt-in,
    with ``agent.add_toolsets``), and the board's."""
    agent = context.config.get("agent") or {}
    chosen = agent.get("toolsets")
    if chosen is None:
        specs = context.provided.of(Kind.TOOLSET)
        chosen = [spec.name for spec in specs if not getattr(spec, "opt_in", False)]
        chosen += list(agent.get("add_toolsets") or ())
    return tuple(dict.fromkeys([*chosen, "kanban"]))


@kanban.command()
def dispatch() -> None:
    """One pass of the dispatcher, without a gateway: take back the tasks of workers that
    are gone, start a worker for each ready task an idle profile can take, tell subscribed
    chats (when a gateway serves this home). The workers go on after this returns."""
    from hermes_plugin_kanban.dispatcher import Dispatcher

    context = _context()
    settings = _settings()
    open_runtime = context.open_runtime
    if open_runtime is None:
        raise click.ClickException("this Hermes cannot run agents (no runtime installed)")
    dispatcher = Dispatcher(context.home, settings)

    async def once() -> None:
        async with open_runtime() as runtime:
            with _board() as board:
                await dispatcher.tick(board, board.store, runtime)

    asyncio.run(once())
    started = ", ".join(dispatcher.workers) or "none"
    click.echo(f"workers started for: {started}")


@kanban.command(hidden=True)
@click.argument("task_id")
@click.option("--run", "run_id", type=int, required=True)
def work(task_id: str, run_id: int) -> None:
    """Work on one task as this profile (the dispatcher starts this)."""
    from hermes_plugin_kanban.worker import work as work_on

    context = _context()
    settings = _settings()
    open_runtime = context.open_runtime
    if open_runtime is None:
        raise click.ClickException("this Hermes cannot run agents (no runtime installed)")
    if not TASK_ID.fullmatch(task_id):
        raise click.ClickException(f"{task_id!r} is not a task id")
    workspace = board_home(context.home, settings) / "kanban" / "workspaces" / task_id
    toolsets = _worker_toolsets(context)
    with _board() as board:
        try:
            outcome = asyncio.run(
                work_on(open_runtime, board, settings, task_id, run_id, workspace, toolsets)
            )
        except (KanbanError, StoreError) as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"{task_id}: {outcome}")
