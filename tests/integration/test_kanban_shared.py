"""One board shared by two homes whose store is one PostgreSQL database (``store.url``): a
task made in one is listed, commented on and completed in the other, and what one home's
worker holds is held for both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def hermes_in(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    env.pop("HERMES_PROFILE", None)
    return subprocess.run(
        [sys.executable, "-m", "hermes_kernel.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_two_homes_on_one_postgresql_share_the_board(tmp_path, postgres):
    url = postgres.create_database()
    homes = []
    for name in ("laptop", "server"):
        home = tmp_path / name
        home.mkdir()
        (home / "config.yaml").write_text(f"store:\n  url: {url}\n")
        homes.append(home)
    laptop, server = homes
    made = hermes_in(
        laptop, "kanban", "create", "Renew the certificate", "--priority", "3", "--json"
    )
    assert made.returncode == 0, made.stderr
    task_id = json.loads(made.stdout)["id"]
    child = json.loads(
        hermes_in(laptop, "kanban", "create", "Restart nginx", "--parent", task_id, "--json").stdout
    )["id"]

    listed = hermes_in(server, "kanban", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    seen = {task["id"]: task["status"] for task in json.loads(listed.stdout)}
    assert seen == {task_id: "ready", child: "todo"}
    assert (
        hermes_in(server, "kanban", "comment", task_id, "the key is in the vault").returncode == 0
    )
    done = hermes_in(server, "kanban", "complete", task_id, "-m", "renewed until 2027")
    assert done.returncode == 0, done.stderr

    shown = json.loads(hermes_in(laptop, "kanban", "show", task_id, "--json").stdout)
    assert shown["task"]["status"] == "done"
    assert shown["task"]["result"] == "renewed until 2027"
    assert shown["comments"][0][1] == "the key is in the vault"
    after = json.loads(hermes_in(laptop, "kanban", "list", "--json").stdout)
    assert {task["id"]: task["status"] for task in after}[child] == "ready"
    assert not (laptop / "state.db").exists() and not (server / "state.db").exists()
