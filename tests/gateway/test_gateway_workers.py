"""Gateway workers on one store in PostgreSQL, under faults: three real ``hermes gateway
run`` processes serve 1,000 Telegram users (the fake Bot API, a model that takes 0.3 s);
the one holding the platforms is killed with -9, then another worker while it runs turns.

Each worker runs in a UTS namespace of its own with a host name of its own, when this
machine allows it (root, as in CI): to the workers they are three hosts, so neither the
platforms' lease nor a dead worker's messages can move on "that pid is gone" and wait for
expiry, as across real hosts. The figures are printed; run with ``-s`` to see them."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_commons.sending import SENDS_AT_ONCE
from hermes_testkit import Reply, ScriptedOpenAIServer

USERS = 1000
MESSAGES = 2
BASE = 50_000
LEASE_SECONDS = 3
DUPLICATE = "may be a duplicate"
RESUMING = "restarted while working on your message"
WORKER_TIMEOUT_SECONDS = 5


def _separate_hosts() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run(
        [unshare, "--uts", "sh", "-c", "hostname probe-host && hostname"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.returncode == 0 and probe.stdout.strip() == "probe-host"


class Worker:
    def __init__(self, name: str, home: Path, own_host: bool) -> None:
        self.name = name
        self.log = home / "gateway.log"
        command = [sys.executable, "-m", "hermes_kernel.cli.main", "gateway", "run"]
        if own_host:  # unshare execs sh, which execs Python: the pid stays the child's
            command = [
                "unshare",
                "--uts",
                "sh",
                "-c",
                f'hostname {name} && exec "$@"',
                "-",
                *command,
            ]
        self.process = subprocess.Popen(
            command,
            env={**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"},
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)


def _home(
    root: Path,
    name: str,
    telegram: FakeTelegram,
    model: str,
    url: str,
    turns: int = 64,
    stream: bool = False,
) -> Path:
    home = root / name
    home.mkdir()
    allowed = ", ".join(str(BASE + n) for n in range(USERS))
    (home / "config.yaml").write_text(
        f"store:\n  url: {url}\n"
        f"model:\n  base_url: {model}\n  default: test-model\n"
        "learning:\n  review: false\n  nudge_every_turns: 0\n"
        f"gateway:\n  stream: {str(stream).lower()}\n  typing: false\n"
        f"  max_concurrent_turns: {turns}\n"
        f"  leader_lease_seconds: {LEASE_SECONDS}\n"
        f"  worker_timeout_seconds: {WORKER_TIMEOUT_SECONDS}\n"
        "  restart_backoff_seconds: 0.2\n  restart_backoff_max_seconds: 1\n"
        "platforms:\n  telegram:\n"
        f"    api_url: {telegram.api_url}\n    poll_timeout_seconds: 1\n"
        f"    allowed_users: [{allowed}]\n"
    )
    (home / ".env").write_text(f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\n")
    return home


def _leader_pid(url: str) -> int | None:
    with psycopg.connect(url) as connection:
        if connection.execute("SELECT to_regclass('leases_held')").fetchone() == (None,):
            return None  # no worker got as far as making its tables yet
        row = connection.execute(
            "SELECT holder FROM leases_held WHERE name = 'gateway-platforms' "
            "AND expires_at > extract(epoch FROM now())"
        ).fetchone()
    return int(str(row[0]).split(":")[1]) if row else None


def _running_turns(url: str) -> Counter[int]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT worker FROM gateway_inbox WHERE state = 'running' AND worker IS NOT NULL"
        ).fetchall()
    return Counter(int(str(worker).split(":")[1]) for (worker,) in rows)


def answers(telegram: FakeTelegram) -> dict[tuple[int, int | None], list[str]]:
    """Each answered message (chat, the message replied to) with the texts of its copies."""
    found: dict[tuple[int, int | None], list[str]] = {}
    for message in telegram.sent():
        if RESUMING not in message.text:
            found.setdefault((message.chat_id, message.reply_to), []).append(message.text)
    return found


def _unfinished(url: str) -> str:
    """What the store says of the messages not yet answered, and of the workers."""
    with psycopg.connect(url) as connection:
        messages = connection.execute(
            "SELECT id, route_key, state, worker FROM gateway_inbox "
            "WHERE state IN ('queued', 'running', 'resuming') ORDER BY id LIMIT 20"
        ).fetchall()
        workers = connection.execute(
            "SELECT holder, expires_at FROM leases_held WHERE name LIKE 'gateway-worker/%'"
        ).fetchall()
        outbox = connection.execute(
            "SELECT state, count(*) FROM outbox_entries GROUP BY state"
        ).fetchall()
    return f"open messages {messages}; workers {workers}; replies {outbox}"


def _failures(log: Path) -> list[str]:
    """The tracebacks of the messages whose handling failed, in a worker's log."""
    text = log.read_text(errors="replace")
    return re.findall(r"gateway: message \d+ failed.*?(?=\nhermes: |\Z)", text, re.S)


def _wait(condition, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def _second_worker_beside_a_busy_first(
    url: str,
    tmp_path: Path,
    telegram: FakeTelegram,
    model_url: str,
    openai_server,
    stream: bool = False,
) -> Iterator[tuple[Worker, Worker]]:
    """The first worker holds the platforms and its one turn slot is taken (a long turn,
    the model's first scripted reply); then a second worker joins, with room for turns:
    the next chat's messages run there. Both are stopped cleanly on the way out."""
    first_home = _home(tmp_path, "first", telegram, model_url, url, 1, stream)
    first = Worker("first", first_home, False)
    workers = [first]
    try:
        _wait(lambda: _leader_pid(url) == first.process.pid, 60, "the first to hold the platforms")
        _wait(lambda: any(m == "getUpdates" for m, _ in list(telegram.calls)), 60, "polling")
        telegram.user_says(BASE, "take your time")  # its one turn slot is taken
        _wait(lambda: len(openai_server.requests) == 1, 30, "the long turn")
        second_home = _home(tmp_path, "second", telegram, model_url, url, stream=stream)
        second = Worker("second", second_home, False)
        workers.append(second)
        yield first, second
    finally:
        for worker in workers:
            worker.process.terminate()
        for worker in workers:
            assert worker.process.wait(60) == 0, worker.log.read_text()


def test_three_workers_answer_every_message_once_through_two_kills(postgres, tmp_path):
    url = postgres.create_database()
    own_hosts = _separate_hosts()
    with (
        FakeTelegram() as telegram,
        ScriptedOpenAIServer(default=Reply.say("answered", delay_seconds=0.3)) as model,
    ):
        homes = [_home(tmp_path, f"worker-{n}", telegram, model.base_url, url) for n in range(3)]
        workers = {w.process.pid: w for w in (Worker(h.name, h, own_hosts) for h in homes)}
        try:
            leader = _wait(lambda: _leader_pid(url), 60, "a worker to hold the platforms")
            _wait(lambda: any(m == "getUpdates" for m, _ in list(telegram.calls)), 60, "polling")
            sent: dict[int, int] = dict.fromkeys(range(BASE, BASE + USERS), 0)

            def replies() -> Counter[int]:
                """Messages answered per user: each reply names the message it answers,
                and a copy sent again counts once (copies are counted on their own); the
                notes that a turn resumes are no answers."""
                return Counter(chat for chat, _ in answers(telegram))

            def converse() -> int:
                """Each user whose last message was answered sends the next; how many
                replies came so far."""
                answered = replies()
                for user, count in sent.items():
                    if count < MESSAGES and answered[user] >= count:
                        telegram.user_says(user, f"message {count} from {user}")
                        sent[user] = count + 1
                return sum(answered.values())

            started = time.monotonic()
            _wait(lambda: converse() >= USERS // 2, 120, "a first half of the replies")

            # 1. The worker that holds the platforms dies.
            workers[leader].kill()
            killed_at = time.monotonic()
            polls_before = len(telegram.calls)
            new_leader = _wait(
                lambda: (pid := _leader_pid(url)) not in (None, leader) and pid,
                60,
                "another worker to take the platforms",
            )
            _wait(
                lambda: any(m == "getUpdates" for m, _ in list(telegram.calls)[polls_before:]),
                60,
                "the new holder to poll",
            )
            moved_after = time.monotonic() - killed_at

            # 2. The other survivor dies while it runs turns.
            (victim,) = [pid for pid in workers if pid not in (leader, new_leader)]

            def victim_busy() -> bool:
                converse()
                return _running_turns(url)[victim] > 0

            _wait(victim_busy, 120, "the last worker to run a turn")
            interrupted = _running_turns(url)[victim]
            workers[victim].kill()

            try:
                _wait(lambda: converse() >= USERS * MESSAGES, 240, "every reply")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; {_unfinished(url)}") from None
            elapsed = time.monotonic() - started
            time.sleep(2 * LEASE_SECONDS)  # a late duplicate would have arrived by now
        finally:
            for worker in workers.values():
                if worker.process.poll() is None:
                    worker.process.terminate()
                    worker.process.wait(60)

        answered = replies()
        marked = [m for m in telegram.sent() if DUPLICATE in m.text]
        notes = [m for m in telegram.sent() if RESUMING in m.text]
        copies = answers(telegram)
        twice = sum(len(texts) - 1 for texts in copies.values())
        unmarked_twice = [
            key for key, texts in copies.items() if sum(DUPLICATE not in t for t in texts) > 1
        ]
        logs = "".join(w.log.read_text(errors="replace")[-3000:] for w in workers.values())
        wrong = {user: answered[user] for user in sent if answered[user] != MESSAGES}
        assert not wrong, f"users answered other than {MESSAGES} times: {wrong}\n{logs}"
        with psycopg.connect(url) as connection:
            states = dict(
                connection.execute("SELECT state, count(*) FROM gateway_inbox GROUP BY state")
            )
            per_message = connection.execute(
                "SELECT count(*) FROM outbox_entries WHERE answers IS NOT NULL "
                "GROUP BY answers HAVING count(*) <> 1"
            ).fetchall()
            undelivered = connection.execute(
                "SELECT count(*) FROM outbox_entries WHERE state <> 'delivered'"
            ).fetchone()
        # A message running where the first kill struck, resumed where the second did, was
        # interrupted twice: by design its user is told so and it is not tried again; that
        # note is its answer, so it is closed as done. A message closed as failed is one
        # whose handling raised: a fault of the gateway's, with its traceback in a log.
        failures = [trace for w in workers.values() for trace in _failures(w.log)]
        assert states == {"done": USERS * MESSAGES}, f"{states}; {failures}"
        assert per_message == [], "a message with other than one reply in the ledger"
        assert undelivered == (0,)
        resumed = sum(
            len(re.findall(r"messages of a worker that stopped are taken up", w.log.read_text()))
            for w in workers.values()
        )
        print(
            f"\n{USERS} users x {MESSAGES} messages, 3 workers "
            f"({'separate host names' if own_hosts else 'one host'}), lease {LEASE_SECONDS} s: "
            f"all answered in {elapsed:.1f} s; platforms moved {moved_after:.1f} s after the "
            f"kill -9 of their worker; {interrupted} turns running in the worker killed next "
            f"were resumed elsewhere ({resumed} hand-overs logged, {len(notes)} resume notes "
            f"sent); resends marked as possible duplicates: {len(marked)}, of which the user "
            f"had the reply already: {twice}"
        )
        # A reply the dead holder had handed to Telegram before it could record so goes again,
        # marked: at most one per send it had in flight. A send that failed in a way that may
        # have delivered it (a timeout on a loaded machine) goes again marked too.
        assert unmarked_twice == [], "a reply sent twice without the note"
        maybe_sent = sum(
            len(re.findall(r"reply \d+ not delivered \(attempt", w.log.read_text()))
            for w in workers.values()
        )
        assert twice <= SENDS_AT_ONCE + maybe_sent, (
            f"{twice} replies arrived twice: more than the {SENDS_AT_ONCE} sends a kill can "
            f"cut plus the {maybe_sent} that failed after they may have gone out"
        )


def test_a_turn_on_the_worker_without_the_platforms_is_answered_and_stopped(
    postgres, tmp_path, telegram, openai_server
):
    """The worker with the platforms has one turn slot, taken: the next chat's message runs
    on the other worker, whose reply the first sends; /stop in that chat stops it there."""
    url = postgres.create_database()
    openai_server.queue(
        Reply.say("the long one", delay_seconds=30),
        Reply.say("from the other worker"),
        Reply.say("never said", delay_seconds=30),
    )
    with _second_worker_beside_a_busy_first(
        url, tmp_path, telegram, openai_server.base_url, openai_server
    ) as (first, second):
        telegram.user_says(BASE + 1, "hello")
        telegram.wait_for_message(BASE + 1, "from the other worker", timeout=60)
        assert _running_turns(url)[first.process.pid] == 1  # the long one, still there
        telegram.user_says(BASE + 1, "and now something slow")
        _wait(lambda: _running_turns(url)[second.process.pid] == 1, 30, "the second's turn")
        telegram.user_says(BASE + 1, "/stop")
        telegram.wait_for_message(BASE + 1, "stopping…", timeout=30)
        telegram.wait_for_message(BASE + 1, "Stopped.", timeout=30)
        assert _running_turns(url)[second.process.pid] == 0
        assert [m.visible for m in telegram.sent(BASE)] == []  # the long one still runs


def test_a_reply_written_on_the_worker_without_the_platforms_is_previewed_as_it_is_written(
    postgres, tmp_path, telegram, openai_server
):
    """The turn runs on the worker without the platforms and streams slowly: the worker
    with them shows it in the chat as it is written, one message edited, which the reply
    then replaces (no second message)."""
    url = postgres.create_database()
    words = " ".join(f"word{n}" for n in range(40))
    openai_server.queue(
        Reply.say("the long one", delay_seconds=30),
        Reply.say(words, chunk_size=8, chunk_delay_seconds=0.1),  # about 4 s
    )
    with _second_worker_beside_a_busy_first(
        url, tmp_path, telegram, openai_server.base_url, openai_server, stream=True
    ):
        telegram.user_says(BASE + 1, "tell me slowly")
        reply = telegram.wait_for(
            lambda sent: next(
                (m for m in sent if m.chat_id == BASE + 1 and m.visible == words), None
            ),
            timeout=60,
        )
        assert [m.visible for m in telegram.sent(BASE + 1)] == [words]  # one message
        assert reply.edits, "no preview was shown while the reply was written"
        assert all(text.endswith(" …") for text in reply.edits)  # each one a preview
        assert words.startswith(reply.edits[-1].removesuffix(" …"))


def test_an_approval_asked_on_the_worker_without_the_platforms_is_answered_by_a_button(
    postgres, tmp_path, telegram, openai_server
):
    """The turn runs on the worker without the platforms; its approval is shown in the chat
    by the worker with them, and the user's button press reaches the turn (through the
    store): the command runs, where before that worker answered "no" for the user."""
    url = postgres.create_database()
    target = tmp_path / "shared"
    target.mkdir(mode=0o700)
    openai_server.queue(
        Reply.say("the long one", delay_seconds=30),
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}),
        Reply.say("Opened it."),
    )
    with _second_worker_beside_a_busy_first(
        url, tmp_path, telegram, openai_server.base_url, openai_server
    ) as (_, second):
        telegram.user_says(BASE + 1, "open up that folder")
        question = telegram.wait_for_message(
            BASE + 1, "Approve this command?", buttons=True, timeout=60
        )
        assert "chmod -R 777" in question.visible
        assert _running_turns(url)[second.process.pid] == 1  # asked from there
        telegram.press(BASE + 2, question, "once")  # someone else: refused
        telegram.wait_for(
            lambda _: any("Only the person" in a.get("text", "") for a in telegram.callback_answers)
        )
        telegram.press(BASE + 1, question, "once")
        telegram.wait_for_message(BASE + 1, "Opened it.", timeout=60)
        assert oct(target.stat().st_mode)[-3:] == "777"
        assert telegram.sent(BASE + 1)[0].buttons == []  # answered: the buttons are gone
