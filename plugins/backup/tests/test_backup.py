"""``hermes backup`` and ``hermes restore`` as a user runs them, on homes the real runtime
wrote: what goes in and what stays out, modes, a round trip whose sessions are searchable
with every count the same, and zips or homes that must be refused without harm."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from hermes_commons.locks import FileLock
from hermes_sdk.runtime import SessionOptions, open_runtime
from hermes_testkit import Reply, ScriptedOpenAIServer

HERMES = str(Path(sys.executable).parent / "hermes")
KEY = "sk-backup-canary-000111"


def hermes(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    environ.pop("OPENAI_API_KEY", None)
    environ["HERMES_HOME"] = str(home)
    return subprocess.run(
        [HERMES, *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


async def chat(home: Path, *texts: str) -> str:
    async with open_runtime(home) as runtime:
        session = await runtime.open_session(SessionOptions(source="test"))
        for text in texts:
            ended = await runtime.start_turn(session.session_id, text).result()
            assert ended.ok, ended.error
        return session.session_id


def counts(database: Path) -> tuple[int, int, int]:
    with sqlite3.connect(database) as db:
        sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        messages = db.execute("SELECT count(*) FROM messages").fetchone()[0]
        stated = db.execute("SELECT coalesce(sum(message_count), 0) FROM sessions").fetchone()[0]
    return sessions, messages, stated


@pytest.fixture
def home(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "learning:\n  review: false\n  nudge_every_turns: 0\n"
    )
    (path / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    os.chmod(path / ".env", 0o600)
    (path / "memories").mkdir()
    (path / "memories" / "MEMORY.md").write_text("Ada drinks tea.\n")
    # A file below the first level keeps the mode it has (Hermes makes the files at the top
    # and in the first-level folders 600 at every start, issue 62): a backup keeps it too.
    (path / "memories" / "notes").mkdir()
    (path / "memories" / "notes" / "trips.md").write_text("Lisbon in May.\n")
    os.chmod(path / "memories" / "notes" / "trips.md", 0o640)
    (path / "cache").mkdir()
    (path / "cache" / "big.bin").write_bytes(b"x" * 1000)
    (path / "gateway.pid").write_text("123\n")
    (path / "venvs" / "mcp").mkdir(parents=True)  # a plugin's cache, tagged as one
    (path / "venvs" / "mcp" / "CACHEDIR.TAG").write_bytes(
        b"Signature: 8a477f597d28d172789f06886806bc55\n"
    )
    (path / "venvs" / "mcp" / "lib.py").write_text("x = 1\n")
    os.symlink("/etc/hostname", path / "a-link")
    openai_server.queue(Reply.say("Noted: quince-marker-41."), Reply.say("Yes."))
    asyncio.run(chat(path, "remember quince-marker-41", "ok?"))
    return path


def test_a_round_trip_keeps_files_modes_and_every_count(home: Path, tmp_path: Path) -> None:
    made = hermes(home, "backup", str(tmp_path))
    assert made.returncode == 0, made.stderr
    assert "secrets (.env) are not in it; add --include-secrets to keep them" in made.stdout
    assert "left out a-link: a symbolic link" in made.stdout
    (zip_path,) = tmp_path.glob("hermes-backup-home-*.zip")
    assert stat.S_IMODE(zip_path.stat().st_mode) == 0o600
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("hermes-backup.json"))
        mode = archive.getinfo("memories/notes/trips.md").external_attr >> 16
    assert {"config.yaml", "state.db", "memories/MEMORY.md"} <= names
    assert not {".env", "cache/big.bin", "gateway.pid", "a-link", "venvs/mcp/lib.py"} & names
    assert not any(name.endswith(("-wal", "-shm")) for name in names)
    assert manifest["format"] == 1 and manifest["secrets"] is False
    assert stat.S_IMODE(mode) == 0o640

    new = tmp_path / "new-home"
    restored = hermes(new, "restore", str(zip_path))
    assert restored.returncode == 0, restored.stderr
    assert "the backup holds no secrets (.env)" in restored.stdout
    assert (new / "memories" / "MEMORY.md").read_text() == "Ada drinks tea.\n"
    assert stat.S_IMODE((new / "memories" / "notes" / "trips.md").stat().st_mode) == 0o640
    assert counts(new / "state.db") == counts(home / "state.db")
    sessions, messages, stated = counts(new / "state.db")
    assert (sessions, messages) == (1, 4) and stated == messages
    found = hermes(new, "sessions", "search", "quince-marker-41")
    assert found.returncode == 0 and "quince-marker-41" in found.stdout, found.stderr


def test_secrets_go_in_only_when_asked_and_keep_their_mode(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "with-keys.zip"
    made = hermes(home, "backup", str(target), "--include-secrets")
    assert made.returncode == 0, made.stderr
    assert KEY not in made.stdout + made.stderr
    new = tmp_path / "new-home"
    assert hermes(new, "restore", str(target)).returncode == 0
    assert (new / ".env").read_text() == f"OPENAI_API_KEY={KEY}\n"
    assert stat.S_IMODE((new / ".env").stat().st_mode) == 0o600


def test_a_home_in_use_is_refused_and_force_saves_it_first(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "b.zip"
    assert hermes(home, "backup", str(target)).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.yaml").write_text("model:\n  default: other-model\n")
    (other / ".env").write_text("OPENAI_API_KEY=sk-other-home\n")
    refused = hermes(other, "restore", str(target))
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("or add --force to replace it (it is backed up first)")
    assert len(refused.stderr.strip().splitlines()) == 1
    with FileLock(other / "gateway" / "gateway.pid", timeout=0):  # a gateway runs there
        busy = hermes(other, "restore", str(target), "--force")
        assert busy.returncode == 1 and "is in use" in busy.stderr
    assert (other / "config.yaml").read_text().startswith("model:\n  default: other-model")
    forced = hermes(other, "restore", str(target), "--force")
    assert forced.returncode == 0, forced.stderr
    (saved,) = tmp_path.glob("other-before-restore-*.zip")
    with zipfile.ZipFile(saved) as archive:
        assert archive.read(".env") == b"OPENAI_API_KEY=sk-other-home\n"  # nothing lost
    assert not (other / ".env").exists()  # the backup had none
    assert counts(other / "state.db") == counts(home / "state.db")


def _zip(path: Path, entries: dict[str, bytes], manifest: bool = True) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        if manifest:
            archive.writestr("hermes-backup.json", json.dumps({"format": 1}))
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def test_bad_zips_are_refused_in_one_line_and_change_nothing(tmp_path: Path) -> None:
    new = tmp_path / "new"
    cases = {
        "not-a-zip": (tmp_path / "x.zip", "is not a zip file"),
        "theirs": (
            _zip(tmp_path / "t.zip", {"state.db": b"", "config.yaml": b""}, manifest=False),
            "is not a Hermes backup (it has no hermes-backup.json): if it is hermes-agent's",
        ),
        "escape": (_zip(tmp_path / "e.zip", {"../evil.txt": b"x"}), "a path outside the home"),
        "damaged": (
            _zip(tmp_path / "d.zip", {"state.db": b"SQLite format 3\x00" + b"\x00" * 200}),
            "state.db in the backup is damaged",
        ),
        "missing": (tmp_path / "nope.zip", "no such file"),
    }
    (tmp_path / "x.zip").write_text("hello")
    for label, (path, message) in cases.items():
        result = hermes(new, "restore", str(path))
        assert result.returncode == 1, label
        assert message in result.stderr, (label, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (label, result.stderr)
        assert not (tmp_path / "evil.txt").exists()
        assert not new.exists() or {p.name for p in new.iterdir()} <= {"cache", "logs"}, label


def test_a_backup_must_be_a_zip_in_a_folder_that_exists(home: Path, tmp_path: Path) -> None:
    wrong = hermes(home, "backup", str(tmp_path / "backup.tar"))
    assert wrong.returncode == 1 and "a backup is a .zip file" in wrong.stderr
    nowhere = hermes(home, "backup", str(tmp_path / "no" / "b.zip"))
    assert nowhere.returncode == 1 and "no such folder" in nowhere.stderr


def test_a_forced_restore_into_a_home_on_another_disk_keeps_or_replaces_it_whole(
    home: Path, tmp_path: Path
) -> None:
    target = tmp_path / "b.zip"
    assert hermes(home, "backup", str(target)).returncode == 0
    elsewhere = Path("/dev/shm") if Path("/dev/shm").is_dir() else tmp_path / "elsewhere"
    real = Path(tempfile.mkdtemp(prefix="hermes-home-", dir=elsewhere))
    try:
        (real / "config.yaml").write_text("model:\n  default: old\n")
        (real / "profiles" / "work").mkdir(parents=True)
        (real / "profiles" / "work" / ".env").write_text("OPENAI_API_KEY=sk-profile-key\n")
        link = tmp_path / "linked-home"
        link.symlink_to(real)
        forced = hermes(link, "restore", str(target), "--force")
        assert forced.returncode == 0, forced.stderr
        assert counts(real / "state.db") == counts(home / "state.db")
        assert not (real / "config.yaml").read_text().startswith("model:\n  default: old")
        assert not [p.name for p in real.iterdir() if p.name.startswith(".hermes-")]
        # A backup never takes a profile's secrets unasked, nor a restore's safety copy.
        again = tmp_path / "again.zip"
        (real / "profiles" / "work").mkdir(parents=True, exist_ok=True)
        (real / "profiles" / "work" / ".env").write_text("OPENAI_API_KEY=sk-profile-key\n")
        assert hermes(link, "backup", str(again)).returncode == 0
        with zipfile.ZipFile(again) as archive:
            assert not [
                n for n in archive.namelist() if n.endswith(".env") or "before-restore" in n
            ]
    finally:
        shutil.rmtree(real, ignore_errors=True)


def test_modes_a_zip_asks_for_are_tamed_and_odd_names_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "m.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hermes-backup.json", json.dumps({"format": 1}))
        entry = zipfile.ZipInfo("bin/tool")
        entry.external_attr = (stat.S_IFREG | 0o4777) << 16
        archive.writestr(entry, b"#!/bin/sh\n")
        archive.writestr("notes 12:30.md", b"at half past\n")
    new = tmp_path / "new"
    result = hermes(new, "restore", str(path))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((new / "bin" / "tool").stat().st_mode) == 0o755
    assert (new / "notes 12:30.md").read_text() == "at half past\n"
    empty = hermes(tmp_path / "typo", "backup", str(tmp_path / "e.zip"))
    assert empty.returncode == 1 and "holds nothing to back up" in empty.stderr
    assert not (tmp_path / "e.zip").exists()
