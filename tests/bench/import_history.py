"""What importing a long hermes-agent history costs: months of sessions into our store.

    uv run python tests/bench/import_history.py [--sessions 2000] [--messages 20]

A hermes-agent state.db with the schema 0.19 writes (taken from the committed fixture, which
the real wheel wrote), filled with ``--sessions`` sessions of ``--messages`` messages each
(a tool call and its result in every fourth pair), imported into an empty home by the same
code ``hermes import hermes-agent`` runs: read from a copy, converted, written in batches,
then indexed for search.

Printed: the import's wall time, sessions and messages per second, the peak RSS it added,
and the ratio against a floor measured in the same run: copying the database and inserting
the same rows into our messages table with one executemany (no conversion, no indexing).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from hermes_plugin_import_hermes_agent.importer import import_home
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.cli.main import command_archive
from hermes_sdk.importing import ImportRequest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hermes_agent" / "home" / "state.db"


def make_source(folder: Path, sessions: int, per_session: int) -> Path:
    """hermes-agent's own schema (from the fixture: its tables and indexes), and synthetic
    rows in it."""
    folder.mkdir()
    path = folder / "state.db"
    with sqlite3.connect(f"file:{FIXTURE}?mode=ro&immutable=1", uri=True) as fixture:
        schema = [
            row[0]
            for row in fixture.execute(
                "SELECT sql FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT "
                "NULL AND name NOT LIKE 'messages_fts%' AND name != 'sqlite_sequence' "
                "ORDER BY type = 'index'"
            )
        ]
    with sqlite3.connect(path) as db:
        for statement in schema:
            db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (22)")
        start = 1_700_000_000.0
        for number in range(sessions):
            session_id = f"20240101_{number:06d}_abcdef"
            db.execute(
                "INSERT INTO sessions (id, source, model, started_at, ended_at, message_count, "
                "input_tokens, output_tokens, title) VALUES (?, 'cli', 'm', ?, ?, ?, 1000, 50, ?)",
                (session_id, start + number, start + number + 60, per_session, f"topic {number}"),
            )
            rows = []
            for position in range(0, per_session, 2):
                at = start + number + position
                if position % 8 == 6:
                    call_id = f"call_{position}"
                    calls = json.dumps([{"id": call_id, "type": "function", "function": {
                        "name": "terminal", "arguments": '{"command": "ls -la"}'}}])  # fmt: skip
                    rows.append((session_id, "assistant", "", None, calls, None, at))
                    rows.append((session_id, "tool", "a.txt\nb.txt", call_id, None, "terminal",
                                 at + 0.5))  # fmt: skip
                else:
                    text = f"question {position} about the deployment of service {number}"
                    rows.append((session_id, "user", text, None, None, None, at))
                    rows.append((session_id, "assistant", "An answer. " * 20, None, None, None,
                                 at + 0.5))  # fmt: skip
            db.executemany(
                "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, "
                "tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
    return folder


def floor_seconds(source: Path, target: Path) -> float:
    """Copy the database, and put its rows into our messages table in one go."""
    started = time.perf_counter()
    copy = target / "copy.db"
    shutil.copyfile(source / "state.db", copy)
    with sqlite3.connect(copy) as theirs:
        sessions = theirs.execute("SELECT id, started_at FROM sessions").fetchall()
        messages = theirs.execute(
            "SELECT session_id, id, role, content, tool_calls, tool_call_id, tool_name, timestamp "
            "FROM messages"
        ).fetchall()
    Database(target / "state.db").close()  # our schema
    with sqlite3.connect(target / "state.db") as ours:
        ours.executemany(
            "INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)", sessions
        )
        ours.executemany(
            "INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, "
            "tool_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            messages,
        )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hermes-bench-import-") as scratch:
        root = Path(scratch)
        source = make_source(root / "source", args.sessions, args.messages)
        target = root / "target"
        target.mkdir()
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        request = ImportRequest(
            source=source,
            target=target,
            dry_run=False,
            open_archive=command_archive,
            import_parts=lambda home: [],  # sessions only: no plugin's files in this source
        )
        report = import_home(source, target, request)
        took = time.perf_counter() - started
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        (sessions,) = [s for s in report.sections if s.kind == "sessions"]
        assert sessions.imported == args.sessions, sessions.as_json()
        (root / "floor").mkdir()
        floor = floor_seconds(source, root / "floor")  # after: its fetchall would set the peak
    total = args.sessions * args.messages
    print(f"import of {args.sessions} sessions, {total} messages: {took:.2f} s")
    print(f"  {args.sessions / took:,.0f} sessions/s, {total / took:,.0f} messages/s")
    print(f"  floor (copy + one executemany): {floor:.2f} s; ratio {took / floor:.2f}x")
    print(f"  peak RSS added: {(rss_after - rss_before) / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
