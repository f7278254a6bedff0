"""Workers taking messages from the inbox, on SQLite and on PostgreSQL: one message per
route at a time and in order, never one message twice, a dead worker's messages taken up by
the others, a worker taken for dead unable to answer, and /stop reaching another worker."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from hermes_plugin_gateway.claims import Claims
from hermes_plugin_gateway.ledger import ClaimLost, Ledger

from hermes_commons.leases import LEASES, Leases, this_host
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef
from hermes_sdk.storage import open_store

from .conftest import Clock, inbound

ALIVE = "elsewhere:1:a"
OTHER = "elsewhere:2:b"


def _stored(ledger: Ledger, *messages: tuple[str, str]) -> list[int]:
    """Store messages given as (route, message id); their inbox ids."""
    items = ledger.accept_many(
        [(inbound(chat_id=route, user=route, message_id=mid), route) for route, mid in messages]
    )
    return [item.id for item in items if item is not None]


def test_a_route_runs_one_message_at_a_time_in_order(shared):
    ledger = Ledger(shared)
    a1, b1, a2, a3 = _stored(ledger, ("a", "1"), ("b", "1"), ("a", "2"), ("a", "3"))
    first, second = Claims(shared, ALIVE), Claims(shared, OTHER)
    assert [i.id for i in first.claim(None, 10)] == [a1, b1]  # a2 waits for a1
    assert second.claim(None, 10) == []
    ledger.reply_ready(a1, ChatRef("telegram", "a", "private"), "one", worker=ALIVE)
    assert [i.id for i in second.claim(None, 10)] == [a2]
    assert first.claim(None, 10) == []  # a3 waits for a2, whoever runs it
    ledger.mark(a2, "running", "s", OTHER)
    ledger.reply_ready(a2, ChatRef("telegram", "a", "private"), "two", worker=OTHER)
    assert [i.id for i in first.claim(["telegram"], 10)] == [a3]
    assert first.claim(["discord"], 10) == [] and first.claim([], 10) == []


def test_a_limit_and_a_platform_filter_hold(shared):
    ledger = Ledger(shared)
    _stored(ledger, *[(f"r{n}", "1") for n in range(5)])
    claims = Claims(shared, ALIVE)
    assert len(claims.claim(None, 2)) == 2
    assert len(claims.claim(["telegram"], 10)) == 3
    assert claims.claim(None, 0) == []


def test_a_message_with_files_stays_for_the_worker_that_has_them(shared, tmp_path):
    ledger = Ledger(shared)
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG")
    photo = Attachment(kind="image", mime="image/png", size=4, path=str(picture))
    keeper, other = Claims(shared, ALIVE), Claims(shared, OTHER)
    keeper.pulse()
    other.pulse()
    for chat in ("p", "q"):
        message = replace(inbound(chat_id=chat, user=chat), attachments=(photo,))
        ledger.accept_many([(message, chat)], worker=ALIVE)
    assert other.claim(None, 5) == []  # the files are on the keeper's disk
    (taken,) = keeper.claim(["telegram"], 1)
    assert taken.attachments[0].path == str(picture) and taken.worker == ALIVE
    keeper.leave()
    assert [item.chat.chat_id for item in other.claim(None, 5)] == ["p", "q"]  # gone: anyone


def test_workers_claiming_at_once_never_take_one_message_twice(shared):
    ledger = Ledger(shared)
    _stored(ledger, *[(f"r{n}", "1") for n in range(60)])
    taken: list[list[int]] = []

    def worker(name: str) -> None:
        claims, mine = Claims(shared, name), []
        for _ in range(20):
            mine += [item.id for item in claims.claim(None, 3)]
        taken.append(mine)

    threads = [threading.Thread(target=worker, args=(f"h:{n}:t",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [i for mine in taken for i in mine]
    assert len(everything) == 60 and len(set(everything)) == 60


def test_a_dead_workers_messages_go_to_the_others_and_it_cannot_answer(shared):
    clock = Clock()
    ledger = Ledger(shared, clock)
    (first,) = _stored(ledger, ("a", "1"))
    dying = Claims(shared, ALIVE, timeout=10, clock=clock)
    survivor = Claims(shared, OTHER, timeout=10, clock=clock)
    assert dying.pulse().peers == 0
    assert survivor.pulse().peers == 1
    assert [i.id for i in dying.claim(None, 5)] == [first]
    assert ledger.mark(first, "running", "s", ALIVE)
    clock.now += 4
    assert survivor.pulse().freed == 0  # 4 s unheard: still alive
    clock.now += 4
    assert survivor.pulse().freed == 0  # 8 s
    clock.now += 3
    pulse = survivor.pulse()  # 11 s: dead
    assert (pulse.peers, pulse.freed) == (0, 1)
    (taken,) = survivor.claim(None, 5)
    assert taken.state == "running"  # interrupted: the survivor resumes it, once
    # The dead worker wakes up: what it writes for the message no longer counts.
    assert not ledger.mark(first, "running", None, ALIVE)
    with pytest.raises(ClaimLost):
        ledger.reply_ready(first, ChatRef("telegram", "a", "private"), "late", worker=ALIVE)
    assert dying.pulse().was_dead
    ledger.reply_ready(first, ChatRef("telegram", "a", "private"), "answer", worker=OTHER)
    assert [item.text for item in ledger.outbox.open()] == ["answer"]


def test_a_worker_of_this_host_that_is_gone_is_dead_at_once(shared):
    ledger = Ledger(shared)
    (item,) = _stored(ledger, ("a", "1"))
    gone = f"{this_host()}:999999999:x"  # no such process
    Claims(shared, gone).pulse()
    Claims(shared, gone).claim(None, 1)
    pulse = Claims(shared, OTHER).pulse()
    assert (pulse.peers, pulse.freed) == (0, 1)
    assert [i.id for i in Claims(shared, OTHER).claim(None, 1)] == [item]


def test_stop_drops_waiting_messages_and_reaches_the_turn_elsewhere(shared):
    ledger = Ledger(shared)
    running, _waiting = _stored(ledger, ("a", "1"), ("a", "2"))
    runner = Claims(shared, OTHER)
    runner.pulse()
    runner.claim(None, 1)
    ledger.mark(running, "running", "s", OTHER)
    assert Claims(shared, ALIVE).request_stop("a") == (1, True)
    assert runner.pulse().to_stop == (running,)
    assert [i.id for i in ledger.open_inbox()] == [running]
    assert Claims(shared, ALIVE).request_stop("b") == (0, False)


def test_stop_drops_a_turn_waiting_to_resume(shared):
    ledger = Ledger(shared)
    (item,) = _stored(ledger, ("a", "1"))
    dying = Claims(shared, ALIVE)
    dying.claim(None, 1)
    ledger.mark(item, "running", "s", ALIVE)
    dying.leave()  # as if it died: the turn waits for a worker to resume it
    assert Claims(shared, OTHER).request_stop("a") == (0, True)
    assert ledger.open_inbox() == []


def test_a_worker_that_was_stalled_itself_judges_no_other(shared):
    clock = Clock()
    slow = Claims(shared, ALIVE, timeout=10, clock=clock)
    other = Claims(shared, OTHER, timeout=10, clock=clock)
    slow.pulse()
    other.pulse()
    clock.now += 30  # the store stalled for everyone
    assert slow.pulse().peers == 1  # it was unheard itself: it judges nobody this time
    clock.now += 1
    assert slow.pulse().peers == 0  # now it may: the other still said nothing


def test_a_renamed_worker_cannot_write_under_its_old_name(shared):
    ledger = Ledger(shared)
    (item,) = _stored(ledger, ("a", "1"))
    claims = Claims(shared, ALIVE)
    claims.pulse()
    (taken,) = claims.claim(None, 1)
    claims.leave()  # taken for dead: its message went back
    claims.rename(OTHER)
    assert not claims.pulse().was_dead  # a new name starts afresh
    (again,) = claims.claim(None, 1)
    assert (taken.worker, again.worker) == (ALIVE, OTHER)
    assert not ledger.mark(item, "running", "s", ALIVE)
    assert ledger.mark(item, "running", "s", OTHER)


def test_a_worker_that_leaves_hands_its_messages_back(shared):
    ledger = Ledger(shared)
    first, second = _stored(ledger, ("a", "1"), ("b", "1"))
    leaving = Claims(shared, ALIVE)
    leaving.pulse()
    leaving.claim(None, 5)
    ledger.mark(first, "running", "s", ALIVE)
    assert leaving.leave() == 2
    staying = Claims(shared, OTHER)
    assert staying.pulse().peers == 0
    assert [(i.id, i.state) for i in staying.claim(None, 5)] == [
        (first, "running"),
        (second, "queued"),
    ]


def test_a_lease_has_one_holder_until_it_expires_or_is_released(shared, tmp_path):
    del shared  # the engine's parameter: the leases share its store
    home = tmp_path / "home"
    clock = Clock()
    with open_store(home, LEASES) as store:
        leases = Leases(store, clock)
        assert leases.take("platforms", ALIVE, 10)
        assert not leases.take("platforms", OTHER, 10)
        assert leases.holder("platforms") == ALIVE
        clock.now += 8
        assert leases.take("platforms", ALIVE, 10)  # renewed
        clock.now += 8
        assert not leases.take("platforms", OTHER, 10)
        clock.now += 3
        assert leases.holder("platforms") is None
        assert leases.previous("platforms") is None
        assert leases.take("platforms", OTHER, 10)  # expired: taken over
        assert leases.previous("platforms") == ALIVE  # whose work the new holder settles
        leases.release("platforms", ALIVE)  # not the holder: nothing happens
        assert leases.holder("platforms") == OTHER
        leases.release("platforms", OTHER)
        assert leases.take("platforms", ALIVE, 10)


def test_a_groups_members_are_its_own_on_either_engine(shared):
    # LIKE takes _ and % as wildcards, escaped here the same way on SQLite and PostgreSQL.
    from hermes_commons.leases import Members, member_sql

    for group, holder in [("a_b", "h:1:a"), ("axb", "h:2:b"), ("a%", "h:3:c"), ("a!", "h:5:e")]:
        with shared.write() as cursor:
            Members(group, holder, 30.0).beat_in(cursor)
    for group, expected in [("a_b", "h:1:a"), ("axb", "h:2:b"), ("a%", "h:3:c"), ("a!", "h:5:e")]:
        sql, pattern = member_sql(group)
        assert [row[0] for row in shared.query(sql, (pattern,))] == [expected], group
    with shared.write() as cursor:
        assert Members("a_b", "h:4:d", 30.0).beat_in(cursor).peers == 1
