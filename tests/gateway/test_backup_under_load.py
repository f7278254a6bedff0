"""A backup taken while the gateway answers: nothing the gateway answered before the backup
began is missing from it, its database is consistent (every session's count matches its
messages), the gateway misses no message meanwhile, and the backup restored into a new home
is searchable with every count the same."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

from hermes_testkit import Reply

from .conftest import OWNER, wait_until

HERMES = str(Path(sys.executable).parent / "hermes")
TURNS = 40


def answer(body) -> Reply:
    said = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return Reply.say(f"ack {said.split()[-1]}", delay_seconds=0.02)


def acks(telegram) -> set[str]:
    """The messages answered in full (a reply still streaming shows "ack …" or "ack m0…")."""
    return {
        found.group(1)
        for m in telegram.sent(OWNER)
        if (found := re.fullmatch(r"ack (m\d{3})", m.visible.strip()))
    }


def database_of(zip_path: Path, into: Path) -> Path:
    with zipfile.ZipFile(zip_path) as archive:
        archive.extract("state.db", into)
    return into / "state.db"


def facts(database: Path) -> tuple[int, int, set[str]]:
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for stated, counted in db.execute(
            "SELECT s.message_count, (SELECT count(*) FROM messages m WHERE m.session_id = s.id)"
            " FROM sessions s"
        ):
            assert stated == counted  # no half-written turn: the session's count agrees
        sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        messages = db.execute("SELECT count(*) FROM messages").fetchone()[0]
        users = {
            str(text).split()[-1]
            for (text,) in db.execute("SELECT content FROM messages WHERE role = 'user'")
        }
    return sessions, messages, users


def test_a_backup_taken_while_the_gateway_answers_loses_nothing(
    running_gateway, telegram, openai_server, hermes, tmp_path
):
    openai_server.respond = answer
    running_gateway()
    environment = dict(os.environ)

    def talk() -> None:
        for number in range(TURNS):
            telegram.user_says(OWNER, f"note number m{number:03d}")
            telegram.wait_for_message(OWNER, f"ack m{number:03d}", timeout=30)

    talker = threading.Thread(target=talk, daemon=True)
    talker.start()
    taken: list[tuple[Path, set[str]]] = []
    for round_number in range(3):
        enough = 8 * (round_number + 1)
        wait_until(lambda enough=enough: len(acks(telegram)) >= enough, timeout=60)
        answered = acks(telegram)
        target = tmp_path / f"backup-{round_number}.zip"
        made = subprocess.run(
            [HERMES, "backup", str(target)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert made.returncode == 0, made.stderr
        taken.append((target, answered))
    talker.join(120)
    assert acks(telegram) == {f"m{n:03d}" for n in range(TURNS)}  # every message answered

    for index, (zip_path, answered) in enumerate(taken):
        sessions, messages, users = facts(database_of(zip_path, tmp_path / f"db-{index}"))
        assert answered <= users, sorted(answered - users)  # nothing answered is missing
        assert sessions >= 1 and messages >= 2 * len(answered)

    last, answered = taken[-1]
    expected = facts(database_of(last, tmp_path / "expected"))
    new_home = tmp_path / "restored"
    restored = subprocess.run(
        [HERMES, "restore", str(last)],
        env={**environment, "HERMES_HOME": str(new_home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert restored.returncode == 0, restored.stderr
    assert facts(new_home / "state.db") == expected
    found = subprocess.run(
        [HERMES, "sessions", "search", "m005"],
        env={**environment, "HERMES_HOME": str(new_home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0 and "m005" in found.stdout, found.stderr
