"""``hermes sessions`` as a user runs it, on a home whose sessions the real runtime stored:
it needs no model, imports no other plugin, and never deletes a session a turn runs on."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_sdk.runtime import SessionOptions, open_runtime
from hermes_testkit import Reply, ScriptedOpenAIServer

HERMES = str(Path(sys.executable).parent / "hermes")
PROVIDERS = "provider-openai,provider-anthropic,provider-local"


def hermes(
    home: Path, *args: str, env: dict[str, str] | None = None, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    environ.update({"HERMES_HOME": str(home), **(env or {})})
    return subprocess.run(
        [*python, HERMES, *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n",
        encoding="utf-8",
    )
    return path


async def stored_session(home: Path, text: str, title: str | None = None) -> str:
    async with open_runtime(home) as runtime:
        session = await runtime.open_session(SessionOptions(source="test", title=title))
        ended = await runtime.start_turn(session.session_id, text).result()
        assert ended.ok, ended.error
        return session.session_id


def test_the_history_needs_no_model(home: Path, openai_server: ScriptedOpenAIServer) -> None:
    openai_server.queue(Reply.say("Tea, mostly."))
    session = asyncio.run(stored_session(home, "what do I drink?"))
    no_model = {"HERMES_DISABLE_PLUGINS": PROVIDERS}  # nothing could answer now

    listed = hermes(home, "sessions", "list", env=no_model)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(session) and "what do I drink?" in listed.stdout
    shown = hermes(home, "sessions", "show", session[:12], env=no_model)
    assert shown.returncode == 0, shown.stderr
    assert f"Session {session}: (untitled)" in shown.stdout
    assert "  source: test; model: " in shown.stdout
    assert "user: what do I drink?\nassistant: Tea, mostly.\n" in shown.stdout
    found = hermes(home, "sessions", "search", "drink", env=no_model)
    assert found.returncode == 0 and found.stdout.startswith(session)
    assert "[drink]" in found.stdout  # the match is marked (no colour: not a terminal)


def test_listing_imports_no_plugin_but_its_own(home: Path) -> None:
    # Start-up is the store and this plugin: no provider, tool or front-end is imported.
    done = hermes(home, "sessions", "list", python=(sys.executable, "-X", "importtime"))
    assert done.returncode == 0, done.stderr
    assert "No sessions yet. Start one with: hermes chat" in done.stdout
    imported = {
        line.rpartition("|")[2].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    plugins = {name.partition(".")[0] for name in imported if name.startswith("hermes_plugin_")}
    assert plugins == {"hermes_plugin_sessions", "hermes_plugin_store_sqlite"}  # and the store


def test_a_session_a_turn_runs_on_is_not_deleted(
    home: Path, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.queue(Reply.say("done"))
    idle = asyncio.run(stored_session(home, "an idle one", title="idle"))
    openai_server.queue(Reply.say("slow answer", delay_seconds=6))

    async def delete_while_a_turn_runs() -> tuple[str, subprocess.CompletedProcess[str]]:
        async with open_runtime(home) as runtime:
            busy = (await runtime.open_session(SessionOptions(source="test"))).session_id
            turn = runtime.start_turn(busy, "take your time")
            deadline = time.monotonic() + 20
            while len(openai_server.requests) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)  # the turn holds its session once the model is asked
            done = await asyncio.to_thread(hermes, home, "sessions", "delete", idle, busy, "-y")
            turn.stop()
            await turn.result()
            return busy, done

    busy, done = asyncio.run(delete_while_a_turn_runs())
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert f"session {busy} is busy" in line
    listed = [
        json.loads(row)["id"]
        for row in hermes(home, "sessions", "list", "--json").stdout.splitlines()
    ]
    assert sorted(listed) == sorted([idle, busy])  # all or none: the idle one is kept too

    deleted = hermes(home, "sessions", "delete", idle, busy, "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.splitlines() == [f"deleted {idle}", f"deleted {busy}"]
    assert "No sessions yet" in hermes(home, "sessions", "list").stdout


def test_deleting_asks_first(home: Path, openai_server: ScriptedOpenAIServer) -> None:
    openai_server.queue(Reply.say("hello"))
    session = asyncio.run(stored_session(home, "hi"))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    refused = subprocess.run(
        [HERMES, "sessions", "delete", session],
        env={**environ, "HERMES_HOME": str(home)},
        input="n\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert f"Delete 1 session(s) ({session})?" in refused.stdout
    assert refused.returncode != 0 and "deleted" not in refused.stdout
    assert session in hermes(home, "sessions", "list").stdout


def _age(home: Path, session_id: str, days: float, ended: bool = True) -> None:
    """Make a stored session look ``days`` old (started, and ended unless not ``ended``)."""
    import sqlite3

    moment = time.time() - days * 86_400
    with sqlite3.connect(home / "state.db") as db:
        db.execute(
            "UPDATE sessions SET started_at = ?, ended_at = ? WHERE id = ?",
            (moment, moment if ended else None, session_id),
        )
        db.execute("UPDATE messages SET created_at = ? WHERE session_id = ?", (moment, session_id))


def test_rename_stats_and_prune(home: Path, openai_server: ScriptedOpenAIServer) -> None:
    openai_server.queue(*(Reply.say(f"answer {n}") for n in range(5)))
    old, open_old, recent, other = (
        asyncio.run(stored_session(home, f"question {n}")) for n in range(4)
    )
    _age(home, old, 40)
    _age(home, open_old, 40, ended=False)  # a chat still open, or left by a crash
    _age(home, other, 10)
    resumed = asyncio.run(stored_session(home, "question 5"))
    _age(home, resumed, 40)  # ended 40 days ago, but it gets a message today:
    import sqlite3

    with sqlite3.connect(home / "state.db") as db:
        db.execute(
            "UPDATE messages SET created_at = ? WHERE session_id = ?", (time.time(), resumed)
        )

    renamed = hermes(home, "sessions", "rename", recent, "Tea notes")
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout.strip() == f"{recent}: titled 'Tea notes'"
    assert "Tea notes" in hermes(home, "sessions", "list").stdout
    missing = hermes(home, "sessions", "rename", "nope", "x")
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1

    stats = hermes(home, "sessions", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    report = json.loads(stats.stdout)
    assert report["sessions"] == 5 and report["messages"] == 10
    assert report["by_source"]["test"]["sessions"] == 5
    shown = hermes(home, "sessions", "stats").stdout
    assert shown.startswith("5 sessions (2 open)") and "\ntest " in shown

    dry = hermes(home, "sessions", "prune", "--older-than", "30", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("would delete 1 session(s) that ended over 30 days ago")
    assert old in dry.stdout and open_old not in dry.stdout.splitlines()[1]
    assert "kept 1 session(s) started over 30 days ago that never ended" in dry.stdout
    pruned = hermes(home, "sessions", "prune", "--older-than", "30", "--yes")
    assert pruned.stdout.startswith("deleted 1 session(s)"), pruned.stderr
    left = hermes(home, "sessions", "list").stdout
    assert old not in left and all(s in left for s in (open_old, recent, other, resumed))
    bad = hermes(home, "sessions", "prune", "--older-than", "-3")
    assert bad.returncode == 2 and "--older-than" in bad.stderr
