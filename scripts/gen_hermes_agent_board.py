"""Add task boards written by the real hermes-agent to the fixture home the import tests read
(tests/fixtures/hermes_agent/home): ``kanban.db`` (its default board) and
``kanban/boards/garden/`` (a second board).

hermes-agent 0.19.0's own board code (``hermes_cli.kanban_db``) writes them, run from an
installation of the wheel: a virtualenv's site-packages where ``pip install
hermes-agent==0.19.0`` put it, or the wheel unpacked (uv's cache keeps one)::

    python scripts/gen_hermes_agent_board.py --site PATH/TO/site-packages

The ids and times are the ones it makes; the tests read the titles, comments and links.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "tests" / "fixtures" / "hermes_agent" / "home"

WRITE = r"""
import json, sys
from pathlib import Path
from hermes_cli import kanban_db as kb

home = Path(sys.argv[1])
kb.init_db()
conn = kb.connect()
invoices = kb.create_task(conn, title="Collect the invoices", body="All of 2026, as PDFs.",
                          assignee="alice", created_by="user", priority=2)
taxes = kb.create_task(conn, title="File the tax return", assignee="bob", created_by="user",
                       parents=[invoices])
call = kb.create_task(conn, title="Call the accountant", created_by="user")
kb.add_comment(conn, taxes, "bob", "Use the new form this year.")
kb.add_comment(conn, invoices, "alice", "Two are still missing from March.")
kb.claim_task(conn, invoices, claimer="fixture:1")
kb.complete_task(conn, invoices, summary="All 41 invoices are in invoices/2026.")
kb.claim_task(conn, call, claimer="fixture:1")
kb.block_task(conn, call, reason="Their phone line is down until Monday.")
folder = home / "kanban" / "attachments" / call
folder.mkdir(parents=True, exist_ok=True)
note = folder / "number.txt"
note.write_text("The accountant's number: 555-0100\n")
size = note.stat().st_size
kb.add_attachment(conn, call, filename="number.txt", stored_path=str(note), size=size,
                  uploaded_by="user")
conn.close()
kb.create_board("garden", name="Garden")
garden = kb.connect(board="garden")
kb.init_db(board="garden")
kb.create_task(garden, title="Plant the tomatoes", created_by="user")
garden.close()
print(json.dumps({"default": [invoices, taxes, call]}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", required=True, type=Path, help="where hermes_cli is installed")
    args = parser.parse_args()
    if not (args.site / "hermes_cli" / "kanban_db.py").is_file():
        sys.exit(f"{args.site}: no hermes_cli/kanban_db.py (hermes-agent 0.19.0) there")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        env = {
            **os.environ,
            "HERMES_HOME": str(work),
            "HERMES_KANBAN_HOME": str(work),
            "PYTHONPATH": str(args.site),
        }
        made = subprocess.run(
            [sys.executable, "-c", WRITE, str(work)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        for old in (HOME / "kanban.db", HOME / "kanban"):
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
        for database in (work / "kanban.db", *work.glob("kanban/boards/*/kanban.db")):
            with sqlite3.connect(database) as db:  # everything in the file, no -wal beside it
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copyfile(work / "kanban.db", HOME / "kanban.db")
        garden = work / "kanban" / "boards" / "garden"
        target = HOME / "kanban" / "boards" / "garden"
        target.mkdir(parents=True)
        shutil.copyfile(garden / "kanban.db", target / "kanban.db")
        shutil.copyfile(garden / "board.json", target / "board.json")
        shutil.copytree(work / "kanban" / "attachments", HOME / "kanban" / "attachments")
        print(json.loads(made.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
