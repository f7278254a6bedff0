"""The board's rules on both store engines (SQLite in the home, a real PostgreSQL): waiting
for parents, loops refused, a claim won once, a dead worker's task taken back, failures that
end in giving up, and news told once."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from hermes_plugin_kanban.board import Board, KanbanError
from hermes_plugin_kanban.schema import SCHEMA

from hermes_commons.leases import this_process
from hermes_sdk.storage import open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def board(request, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres").create_database()
        (home / "config.yaml").write_text(f"store:\n  url: {url}\n")
    store = open_store(home, SCHEMA)
    yield Board(store)
    store.close()


def events(board: Board, task_id: str) -> list[str]:
    return [event.kind for event in board.events(task_id)]


def test_a_task_waits_for_its_parents_and_loops_are_refused(board):
    first = board.create("Gather data")
    second = board.create("Draft the report", parents=[first.id])
    assert (first.status, second.status) == ("ready", "todo")
    with pytest.raises(KanbanError, match="would be a loop"):
        board.link(second.id, first.id)
    with pytest.raises(KanbanError, match="itself"):
        board.link(first.id, first.id)
    board.complete(first.id, "data.csv")
    assert board.task(second.id).status == "ready"
    assert events(board, second.id) == ["created", "promoted"]
    with pytest.raises(KanbanError, match="done already"):
        board.complete(first.id, "again")


def test_a_ready_task_is_claimed_once_however_many_ask(board):
    task = board.create("Only once")
    won: list[int | None] = []
    threads = [
        threading.Thread(target=lambda: won.append(board.claim(task.id, "alice"))) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len([run for run in won if run is not None]) == 1
    assert board.task(task.id).status == "running"
    assert len(board.runs(task.id)) == 1


def test_a_dead_worker_s_task_is_taken_back_and_a_live_one_s_is_not(board):
    task = board.create("Work")
    run_id = board.claim(task.id, "alice")
    assert run_id is not None
    dead = subprocess.run(
        [
            sys.executable,
            "-c",
            "from hermes_commons.leases import this_process; print(this_process())",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()  # a process of this host that has ended
    board.take(task.id, run_id, dead, 60, None)
    live = board.create("Other work")
    live_run = board.claim(live.id, "bob")
    assert live_run is not None
    board.take(live.id, live_run, this_process(), 60, None)
    assert board.reclaim_dead(grace=30, failure_limit=3) == [task.id]
    assert board.task(task.id).status == "ready"
    assert board.task(live.id).status == "running"
    (run,) = board.runs(task.id)
    assert run.outcome == "reclaimed" and run.error == "the worker's process ended"
    assert board.last_failed_profile(task.id) == "alice"
    assert events(board, task.id) == ["created", "claimed", "started", "reclaimed"]
    with pytest.raises(KanbanError, match=r"no longer this worker.s"):
        board.complete(task.id, "late", run_id=run_id)  # the dead worker's run is over


def test_failures_in_a_row_end_in_giving_up(board):
    task = board.create("Flaky")
    holder = this_process()
    outcomes = []
    for _ in range(2):
        run_id = board.claim(task.id, "alice")
        assert run_id is not None
        board.take(task.id, run_id, holder, 60, None)
        outcomes.append(
            board.finish(
                task.id, run_id, holder, ok=False, summary="", error="boom", failure_limit=2
            )
        )
    assert outcomes == ["ready", "blocked"]
    found = board.task(task.id)
    assert (
        found.status == "blocked" and "gave up after 2 failed attempts: boom" in found.block_reason
    )
    assert board.unblock(task.id).status == "ready"  # a person looked: it starts afresh
    assert board.task(task.id).failures == 0


def test_news_is_told_once_and_a_chat_that_missed_it_hears_it_again(board):
    task = board.create("Tell me")
    board.subscribe(task.id, "telegram", "42")
    board.block(task.id, "needs a key")
    first = board.take_news()
    assert [(p, c, e.kind) for p, c, e in first] == [("telegram", "42", "blocked")]
    assert board.take_news() == []
    board.untell("telegram", "42", first[0][2])  # the send failed
    assert [e.kind for _, _, e in board.take_news()] == ["blocked"]
    board.unblock(task.id)
    board.complete(task.id, "done it")
    assert [e.kind for _, _, e in board.take_news()] == ["completed"]
    assert board.subscriptions(task.id) == []  # over: the subscription ended with it


def test_archived_boards_and_bad_requests_are_one_line(board):
    with pytest.raises(KanbanError, match="no board 'nope'"):
        board.create("x", board="nope")
    board.create_board("ops", "Operations")
    assert [slug for slug, _, _ in board.boards()] == ["default", "ops"]
    with pytest.raises(KanbanError, match="exists already"):
        board.create_board("ops", None)
    with pytest.raises(KanbanError, match="lowercase"):
        board.create_board("Bad Name", None)
    with pytest.raises(KanbanError, match="needs a title"):
        board.create("   ")
    running = board.create("busy", board="ops")
    board.claim(running.id, "alice")
    with pytest.raises(KanbanError, match="cannot be archived"):
        board.archive(running.id)
    with pytest.raises(KanbanError, match="cannot be reassigned"):
        board.assign(running.id, "bob")


def test_a_task_blocked_under_its_worker_is_free_again_at_once_and_the_old_run_settles_nothing(
    board,
):
    task = board.create("Contested")
    holder = this_process()
    first = board.claim(task.id, "alice")
    assert first is not None
    board.take(task.id, first, holder, 60, None)
    board.block(task.id, "waiting for the vendor", "user")  # a person, while alice works
    assert not board.heartbeat(task.id, first, holder, 60)  # alice's worker stops
    board.unblock(task.id)
    second = board.claim(task.id, "bob")
    assert second is not None
    board.take(task.id, second, "vm@1:1:1-bob", 60, None)  # the lease is free at once
    with pytest.raises(KanbanError, match=r"no longer this worker.s"):
        board.block(task.id, "alice's late idea", "alice", run_id=first)
    with pytest.raises(KanbanError, match=r"no longer this worker.s"):
        board.complete(task.id, "alice's late result", run_id=first)
    assert board.task(task.id).status == "running"
    outcomes = [run.outcome for run in board.runs(task.id)]
    assert outcomes == ["blocked", None]
