"""The dispatcher: a gateway service that, every ``kanban.tick_seconds``, gives back the
tasks of workers that are gone, starts a worker for each ready task an idle profile can
take, and tells subscribed chats what changed, through the delivery ledger.

A worker is a process of its own (``hermes -p PROFILE kanban work TASK --run N``), so one
that crashes or is killed costs its task one attempt, never the gateway. Claims are
transactions of the store, so gateways sharing a board in PostgreSQL never start two
workers for one task; the news cursor moves in the transaction that takes the news, so a
chat is told each change once.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess

from hermes_commons.environment import safe_environment
from hermes_commons.running import hermes_command
from hermes_commons.text import one_line
from hermes_plugin_kanban.board import TASK_ID, Board, Event, Task
from hermes_plugin_kanban.schema import SCHEMA
from hermes_plugin_kanban.settings import KanbanConfig
from hermes_plugin_kanban.where import BOARD_HOME_ENV, board_home, profiles_of
from hermes_plugin_kanban.worker import RUN_ENV, TASK_ENV
from hermes_sdk.runtime import Runtime
from hermes_sdk.storage import Store, open_store

__all__ = ["Dispatcher", "news_line"]

log = logging.getLogger("hermes.kanban")
DEFAULT_PROFILE = "default"
"""The home itself, as a worker (no profile)."""
PASSED_ON = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)
"""How this machine reaches the network, passed on to workers; keys are not: a worker reads
them from its home's .env (a key only exported in the gateway's shell is not passed)."""


def news_line(event: Event, task: Task) -> str:
    """What a subscribed chat is told about ``event``."""
    title = one_line(task.title, 120)
    who = f" @{task.last_profile}" if task.last_profile else ""
    if event.kind == "completed":
        summary = one_line(str(event.payload.get("summary") or task.result or ""), 200)
        return f"✔{who} task {task.id} done: {title}" + (f"\n{summary}" if summary else "")
    if event.kind == "blocked":
        reason = one_line(str(event.payload.get("reason") or ""), 160)
        return f"⏸{who} task {task.id} blocked: {title}\n{reason}"
    if event.kind == "gave_up":
        error = one_line(str(event.payload.get("error") or ""), 200)
        tries = event.payload.get("failures")
        return f"✖ task {task.id} gave up after {tries} attempts: {title}\n{error}"
    if event.kind == "reclaimed":
        reason = one_line(str(event.payload.get("reason") or ""), 160)
        return f"↻ task {task.id} taken back from its worker ({reason}); it goes to another"
    return f"task {task.id} {event.kind}: {title}"


class Dispatcher:
    def __init__(self, home: str, settings: KanbanConfig) -> None:
        self.home = board_home(home, settings)
        """The home whose profiles work on the board (a gateway run as a profile starts
        them all the same)."""
        self.settings = settings
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        """Task id -> the worker process started for it (polled until it ends; a process
        of its own that outlives this one)."""

    def local_profiles(self) -> set[str]:
        """The profiles this home can start a worker as."""
        return {DEFAULT_PROFILE, *profiles_of(self.home)}

    def profiles(self) -> list[str]:
        """Who takes tasks nobody is assigned to."""
        if self.settings.workers is not None:
            return list(self.settings.workers)
        return profiles_of(self.home) or [DEFAULT_PROFILE]

    async def run(self, runtime: Runtime) -> None:
        store = await asyncio.to_thread(open_store, self.home, SCHEMA)
        board = Board(store)
        try:
            while True:
                try:
                    await self.tick(board, store, runtime)
                except Exception as exc:  # noqa: BLE001 - one bad tick; the next tries again
                    log.warning("kanban: dispatching failed: %s", exc)
                await asyncio.sleep(self.settings.tick_seconds)
        finally:
            # Workers are processes of their own: they finish their tasks (holding their
            # leases) whether or not this gateway runs on.
            store.close()

    async def tick(self, board: Board, store: Store, runtime: Runtime) -> None:
        settings = self.settings
        self._reap()
        back = await store.run(board.reclaim_dead, settings.start_seconds, settings.failure_limit)
        for task_id in back:
            log.warning("kanban: task %s taken back from a worker that is gone", task_id)
        await self._dispatch(board, store)
        await self._tell(board, store, runtime)

    async def _dispatch(self, board: Board, store: Store) -> None:
        command = hermes_command()
        if command is None:
            log.warning("kanban: cannot find the hermes command to start workers with")
            return
        busy = await store.run(board.running_profiles)
        ready = await store.run(lambda: board.tasks(None, status="ready"))
        workers = self.profiles()
        for task in ready:
            if not TASK_ID.fullmatch(task.id):  # it would name a worker's log and folder
                reason = f"its id {task.id!r} cannot name a worker's folder: make it anew"
                await store.run(board.block, task.id, reason, "dispatcher")
                continue
            profile = await self._choose(board, store, task, workers, busy)
            if profile is None:
                continue
            run_id = await store.run(board.claim, task.id, profile)
            if run_id is None:
                continue  # another dispatcher took it
            busy[profile] = busy.get(profile, 0) + 1
            try:
                await asyncio.to_thread(self._start, command, task, run_id, profile)
            except Exception as exc:  # noqa: BLE001 - the reclaim after start_seconds retries
                log.warning("kanban: starting a worker for %s failed: %s", task.id, exc)

    async def _choose(
        self, board: Board, store: Store, task: Task, workers: list[str], busy: dict[str, int]
    ) -> str | None:
        """The profile to run ``task``: its assignee when idle (and a profile of this home:
        another home sharing the board runs the others), else an idle worker. A task taken
        back from a worker, or failed by one, waits for another worker when there is
        another: what killed one may be that profile's, not the task's."""
        per = self.settings.per_worker
        if task.assignee:
            if task.assignee not in self.local_profiles():
                return None
            return task.assignee if busy.get(task.assignee, 0) < per else None
        candidates = workers
        if task.failures and len(workers) > 1:
            failed = await store.run(board.last_failed_profile, task.id)
            candidates = [name for name in workers if name != failed] or workers
        idle = [name for name in candidates if busy.get(name, 0) < per]
        if not idle:
            return None
        return min(idle, key=lambda name: busy.get(name, 0))

    def _start(self, command: str, task: Task, run_id: int, profile: str) -> None:
        env = safe_environment(PASSED_ON)
        env["HERMES_HOME"] = str(self.home)
        env["HERMES_PROFILE"] = profile  # "default" too: not the home's sticky profile
        env[BOARD_HOME_ENV] = str(self.home)
        env[TASK_ENV] = task.id
        env[RUN_ENV] = str(run_id)
        logs = self.home / "logs" / "kanban"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{task.id}.log", "ab") as output:
            # subprocess, not asyncio's: a collected asyncio process kills its child (3.12+).
            process = subprocess.Popen(
                [command, "kanban", "work", task.id, "--run", str(run_id)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                cwd=str(self.home),
                start_new_session=True,
            )
        self.workers[task.id] = process
        log.info("kanban: %s works on %s (run %d, pid %d)", profile, task.id, run_id, process.pid)

    def _reap(self) -> None:
        for task_id, process in list(self.workers.items()):
            if process.poll() is not None:
                del self.workers[task_id]

    async def _tell(self, board: Board, store: Store, runtime: Runtime) -> None:
        news = await store.run(board.take_news)
        failed: set[tuple[str, str, str]] = set()
        for platform, chat_id, event in news:
            if (platform, chat_id, event.task_id) in failed:
                continue  # its cursor went back before an earlier event: told next time
            try:
                task = await store.run(board.task, event.task_id)
                await runtime.deliver(platform, chat_id, news_line(event, task))
            except Exception as exc:  # noqa: BLE001 - told at the next tick instead
                log.warning("kanban: telling %s:%s failed: %s", platform, chat_id, exc)
                failed.add((platform, chat_id, event.task_id))
                try:
                    await store.run(board.untell, platform, chat_id, event)
                except Exception as error:  # noqa: BLE001 - the others are still told
                    log.warning("kanban: news for %s:%s lost: %s", platform, chat_id, error)
