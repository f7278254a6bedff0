"""``hermes import hermes-agent`` on homes the real hermes-agent 0.19.0 wrote
(tests/fixtures/hermes_agent, made by scripts/gen_hermes_agent_homes.py): everything comes
over, the source stays byte for byte as it was, and the imported sessions can be searched,
resumed and chatted in. Also: a hermes-agent home met by accident is one line everywhere."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from hermes_commons.dotenv import quote_dotenv_value, read_dotenv
from hermes_testkit import Reply

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hermes_agent" / "home"


def fixture_ids(home: Path) -> dict[str, str | None]:
    """The fixture's sessions as hermes-agent stored them: id -> parent id."""
    with sqlite3.connect(f"file:{home / 'state.db'}?mode=ro&immutable=1", uri=True) as db:
        return dict(db.execute("SELECT id, parent_session_id FROM sessions").fetchall())


def digest(folder: Path) -> dict[str, tuple[str, float, int]]:
    """Every file under ``folder``: its content hash, modification time and mode."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            found[str(path.relative_to(folder))] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                stat.st_mtime,
                stat.st_mode,
            )
    return found


@pytest.fixture
def source(tmp_path: Path) -> Path:
    copy = tmp_path / "hermes-agent-home"
    shutil.copytree(FIXTURE, copy, symlinks=True)
    return copy


def test_a_whole_home_comes_over_and_the_source_is_unchanged(hermes, source):
    before = digest(source)
    listing_before = sorted(p.name for p in source.iterdir())

    result = hermes("import", "hermes-agent", str(source), "--yes")

    assert result.code == 0, result.err
    assert digest(source) == before  # content, times and modes, file by file
    assert sorted(p.name for p in source.iterdir()) == listing_before  # no -wal, -shm, lock
    assert "sessions: 6 came over" in result.out
    assert "is as it was" in result.out

    home = hermes.home
    config = yaml.safe_load((home / "config.yaml").read_text())
    theirs = yaml.safe_load((source / "config.yaml").read_text())
    assert config["model"] == {"default": "fixture-model", "base_url": theirs["model"]["base_url"]}
    assert config["agent"]["backend"] == "local"
    assert config["approvals"] == {"mode": "manual", "allow": ["[g]it status"]}
    assert config["memory"] == {"memory_chars": 2200, "user_chars": 1375}
    assert config["mcp_servers"] == {"time": {"command": "uvx", "args": ["mcp-server-time"]}}
    assert "display.skin: how hermes-agent's terminal looks" in result.out  # left, with why

    assert (home / ".env").stat().st_mode & 0o777 == 0o600
    assert read_dotenv(home / ".env")["OPENAI_API_KEY"] == "sk-fixture-not-a-real-key"
    assert "sk-fixture-not-a-real-key" not in result.out + result.err
    memory = (home / "memories" / "MEMORY.md").read_text()
    assert memory == "The project uses uv.\n§\nTests run with pytest -n 2.\n"
    assert (home / "memories" / "USER.md").read_text() == "Prefers tea.\n"
    skill = home / "skills" / "home" / "brew-green-tea" / "SKILL.md"
    assert skill.read_bytes() == (source / "skills/home/brew-green-tea/SKILL.md").read_bytes()
    jobs = json.loads((home / "cron" / "jobs.json").read_text())["jobs"]
    assert sorted(job["name"] for job in jobs) == ["news", "weekly plan"]
    assert not any(job.get("paused") for job in jobs)  # the scheduler plugin is installed
    assert not (home / "SOUL.md").exists()  # hermes-agent's default persona stays behind
    assert (home / "profiles" / "work" / "config.yaml").exists()

    listed = hermes("sessions", "list", "--json")
    stored = {json.loads(line)["id"]: json.loads(line) for line in listed.out.splitlines()}
    ids = fixture_ids(source)
    assert set(stored) == set(ids)  # the original ids
    (child,) = [i for i, parent in ids.items() if parent]
    assert stored[child]["parent_session_id"] == ids[child]
    assert stored[child]["source"] == "delegate"
    paired = hermes("pairing", "list")
    assert "4242" in paired.out and "ada" in paired.out

    profile = hermes("--profile", "work", "sessions", "list", "--json")
    assert profile.code == 0, profile.err
    (work,) = [json.loads(line) for line in profile.out.splitlines()]
    assert work["id"] in fixture_ids(source / "profiles" / "work")
    assert work["model"] == "work-model"
    work_config = yaml.safe_load((home / "profiles" / "work" / "config.yaml").read_text())
    assert work_config["model"]["default"] == "work-model"


def test_imported_sessions_are_searched_resumed_and_chatted_in(hermes, source, openai_server):
    assert hermes("import", "hermes-agent", str(source), "--yes").code == 0
    found = hermes("sessions", "search", "hermes-fixture-marker-7")
    assert found.code == 0, found.err
    (marker_session,) = {line.split()[0] for line in found.out.splitlines() if line.strip()}
    assert "Tokyo weather" in hermes("sessions", "list").out  # the title came over
    assert "東京" in hermes("sessions", "search", "東京").out  # CJK through the trigram index
    shown = hermes("sessions", "show", marker_session)
    assert "terminal" in shown.out and "echo hermes-fixture-marker-7" in shown.out

    assert hermes("config", "set", "model.base_url", openai_server.base_url).code == 0
    openai_server.queue(Reply.say("Yes: it printed the marker."))
    reply = hermes("chat", "-q", "Did that command work?", "--resume", marker_session)

    assert reply.code == 0, reply.err
    assert "Yes: it printed the marker." in reply.out
    sent = openai_server.requests[-1].json["messages"]
    assert sent[0]["role"] == "system" and "Prefers tea." in sent[0]["content"]  # built here
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    call = sent[2]["tool_calls"][0]
    assert call["function"]["name"] == "terminal" and sent[3]["tool_call_id"] == call["id"]
    assert "hermes-fixture-marker-7" in sent[3]["content"]
    again = hermes("sessions", "show", marker_session)
    assert "Yes: it printed the marker." in again.out


def test_a_second_import_brings_only_what_is_new(hermes, source):
    assert hermes("import", "hermes-agent", str(source), "--yes").code == 0
    config_before = (hermes.home / "config.yaml").read_text()
    memory_before = (hermes.home / "memories" / "MEMORY.md").read_text()

    again = hermes("import", "hermes-agent", str(source), "--yes")

    assert again.code == 0, again.err
    assert "sessions: 0 came over, 1 already here" in again.out
    assert "memory entries: 0 came over, 3 already here" in again.out
    assert (hermes.home / "config.yaml").read_text() == config_before
    assert (hermes.home / "memories" / "MEMORY.md").read_text() == memory_before
    listed = hermes("sessions", "list", "--json").out.splitlines()
    assert len(listed) == 6


def test_a_dry_run_changes_nothing_anywhere(hermes, source):
    before = digest(source)
    result = hermes("import", "hermes-agent", str(source), "--dry-run")
    assert result.code == 0, result.err
    assert "sessions: 6 would come over" in result.out
    assert "Nothing was changed" in result.out
    assert digest(source) == before
    assert not (hermes.home / "config.yaml").exists()
    assert not (hermes.home / "state.db").exists()
    assert not (hermes.home / "memories").exists()
    as_json = json.loads(hermes("import", "hermes-agent", str(source), "--dry-run", "--json").out)
    (home, profile) = as_json["homes"]
    counts = {section["kind"]: section["imported"] for section in home["sections"]}
    assert counts["sessions"] == 6 and counts["memory entries"] == 3 and counts["cron jobs"] == 2
    assert profile["profile"] == "work"
    assert digest(source) == before and not (hermes.home / "state.db").exists()


def test_without_yes_and_no_terminal_to_ask_nothing_is_imported(hermes, source):
    result = hermes("import", "hermes-agent", str(source))
    assert result.code == 1
    assert "add --yes" in result.err
    assert "sessions: 6 would come over" in result.out  # it showed what it would do
    assert not (hermes.home / "state.db").exists()


def test_the_source_is_never_the_target(hermes, source, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(source))
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 1
    assert "this is a hermes-agent home" in result.err
    assert "hermes import hermes-agent" in result.err
    assert "Traceback" not in result.err


def test_a_home_that_is_only_its_state_db_is_not_imported_into_itself(hermes, source, monkeypatch):
    (source / "config.yaml").unlink()  # settings load: the import's own check refuses
    monkeypatch.setenv("HERMES_HOME", str(source))
    before = digest(source)
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 1
    assert "is the hermes-agent home itself" in result.err
    assert f"HERMES_HOME={source}-new hermes import hermes-agent {source}" in result.err
    assert {k: v[0] for k, v in digest(source).items() if k in before} == {
        k: v[0] for k, v in before.items()
    }


@pytest.mark.parametrize(
    ("path", "problem"),
    [("missing", "does not exist"), ("empty", "not a hermes-agent home")],
)
def test_a_source_that_is_not_a_hermes_agent_home_is_one_line(hermes, tmp_path, path, problem):
    (tmp_path / "empty").mkdir()
    result = hermes("import", "hermes-agent", str(tmp_path / path), "--yes")
    assert result.code == 1
    assert problem in result.err and len(result.err.strip().splitlines()) == 1


def test_a_hermes_home_is_not_imported_as_hermes_agents(hermes, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    from hermes_plugin_store_sqlite.database import Database

    from hermes_kernel.store.state import StateStore

    StateStore(Database(other / "state.db")).close()
    result = hermes("import", "hermes-agent", str(other), "--yes")
    assert result.code == 1
    assert "is a Hermes home already" in result.err


@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "list"],
        ["chat", "-q", "hello"],
        ["status"],
        ["model"],
        ["plugins", "list"],
        ["sessions", "search", "tea"],
    ],
)
def test_a_hermes_agent_home_met_by_accident_is_one_line(hermes, source, monkeypatch, command):
    monkeypatch.setenv("HERMES_HOME", str(source))
    before = digest(source)
    result = hermes(*command)
    assert result.code == 1
    assert "this is a hermes-agent home" in result.err
    assert "hermes import hermes-agent" in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert {k: v[0] for k, v in digest(source).items() if k in before} == {
        k: v[0] for k, v in before.items()
    }


def test_a_hermes_agent_state_db_alone_is_recognised(hermes, source, monkeypatch):
    (source / "config.yaml").unlink()  # only its state.db gives it away now
    monkeypatch.setenv("HERMES_HOME", str(source))
    before = (source / "state.db").read_bytes()
    for command in (["sessions", "list"], ["chat", "-q", "hello"], ["status"]):
        result = hermes(*command)
        assert result.code == 1
        assert "state.db is hermes-agent's" in result.err
        assert "hermes import hermes-agent" in result.err
        assert "Traceback" not in result.err and "already exists" not in result.err
    assert (source / "state.db").read_bytes() == before
    doctor = hermes("doctor")
    assert doctor.code == 1
    assert "[FAIL]" in doctor.out and "this is a hermes-agent home" in doctor.out
    assert "fix: run `hermes import hermes-agent" in doctor.out


def test_doctor_reports_a_hermes_agent_config_with_the_fix(hermes, source, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(source))
    doctor = hermes("doctor", "--json")
    assert doctor.code == 1
    findings = json.loads(doctor.out)["findings"]
    (foreign,) = [f for f in findings if "hermes-agent home" in f["message"]]
    assert foreign["level"] == "error"
    assert "hermes import hermes-agent" in foreign["fix"]


def test_a_running_hermes_agent_gateway_is_pointed_out(hermes, source):
    import os

    (source / "gateway.pid").write_text(json.dumps({"pid": os.getpid()}))
    result = hermes("import", "hermes-agent", str(source), "--dry-run")
    assert result.code == 0, result.err
    assert f"its gateway is running (pid {os.getpid()})" in result.out


def test_secrets_with_quotes_and_spaces_read_back_as_they_were(hermes, source):
    tricky = "a \"b\" 'c' #d\\e"
    # Written as python-dotenv (hermes-agent's reader, and the rules of ours) reads it back.
    (source / ".env").write_text(
        f"OPENAI_API_KEY=plain\nTRICKY_TOKEN={quote_dotenv_value(tricky)}\n"
    )
    assert hermes("import", "hermes-agent", str(source), "--yes").code == 0
    assert read_dotenv(hermes.home / ".env") == {"OPENAI_API_KEY": "plain", "TRICKY_TOKEN": tricky}


OLDER = FIXTURE.parent / "home-0.13.0"


@pytest.mark.skipif(not OLDER.exists(), reason="no home of hermes-agent 0.13.0 generated")
def test_a_home_of_an_older_release_comes_over_too(hermes, tmp_path):
    source = tmp_path / "older"
    shutil.copytree(OLDER, source, symlinks=True)
    before = digest(source)
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 0, result.err
    assert "(schema version 11)" in result.out
    assert digest(source) == before
    ids = fixture_ids(source)
    listed = hermes("sessions", "list", "--json").out.splitlines()
    assert {json.loads(line)["id"] for line in listed} == set(ids)
    (child,) = [i for i, parent in ids.items() if parent]
    stored = {json.loads(line)["id"]: json.loads(line) for line in listed}
    assert stored[child]["parent_session_id"] == ids[child]
    found = hermes("sessions", "search", "hermes-fixture-marker-7").out
    assert "terminal" in hermes("sessions", "show", found.split()[0]).out
    assert "Prefers tea." in (hermes.home / "memories" / "USER.md").read_text()


@pytest.mark.skipif(not OLDER.exists(), reason="no home of hermes-agent 0.13.0 generated")
def test_sessions_only_in_the_json_logs_still_come_over(hermes, tmp_path):
    source = tmp_path / "older"
    shutil.copytree(OLDER, source, symlinks=True)
    ids = fixture_ids(source)
    (source / "state.db").write_bytes(b"damaged " * 64)  # only the logs remain
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 0, result.err
    assert "not a readable SQLite database" in result.out
    assert f"{len(ids)} of them only in hermes-agent's sessions/*.json logs" in result.out
    listed = [json.loads(line) for line in hermes("sessions", "list", "--json").out.splitlines()]
    assert {row["id"] for row in listed} == set(ids)
    found = hermes("sessions", "search", "hermes-fixture-marker-7")
    assert found.out.strip(), "the log's tool result is searchable"


def test_this_homes_own_config_keeps_its_comments_and_values(hermes, source):
    own = "# my settings: do not lose this comment\nagent:\n  max_iterations: 42  # mine\n"
    hermes.config(own)
    assert hermes("import", "hermes-agent", str(source), "--yes").code == 0
    text = (hermes.home / "config.yaml").read_text()
    assert text.startswith(own)  # untouched, the imported keys after it
    config = yaml.safe_load(text)
    assert config["agent"] == {"max_iterations": 42, "backend": "local"}
    assert config["model"]["default"] == "fixture-model"


def test_a_file_that_is_not_text_is_one_line_and_a_rerun_finishes(hermes, source):
    soul = source / "SOUL.md"
    soul.write_bytes(b"You are \xff\xfe terse.\n")
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 1
    assert result.err.strip() == (
        f"Error: {soul}: not UTF-8 text (byte 8): save it as UTF-8, then import again"
    )
    soul.write_text("You are terse.\n")
    again = hermes("import", "hermes-agent", str(source), "--yes")
    assert again.code == 0, again.err
    assert "sessions: 6 came over" in again.out


def test_an_unknown_source_lists_the_installed_importers_in_one_line(hermes, source):
    unknown = hermes("import", "openclaw", "--yes")
    assert unknown.code == 1
    [line] = unknown.err.strip().splitlines()
    assert line == (
        "Error: no importer for 'openclaw'; installed: hermes-agent (a hermes-agent home, "
        "default ~/.hermes)"
    )
    named = hermes("import", str(source))
    assert named.code == 1
    assert f"that folder is a hermes-agent home: hermes import hermes-agent {source}" in named.err
    bare = hermes("import")
    assert bare.code == 1 and "name what to import from; installed: hermes-agent" in bare.err


def test_each_plugin_brings_its_own_part_and_a_missing_one_is_named(hermes, source, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "cron")
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 0, result.err
    assert "  cron jobs:" not in result.out
    assert (
        "- cron/: its cron jobs: no installed plugin brings them over; install the one that "
        "keeps them (hermes plugins install cron), then import again"
    ) in result.out
    assert not (hermes.home / "cron" / "jobs.json").exists()
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    again = hermes("import", "hermes-agent", str(source), "--yes")
    assert "cron jobs: 2 came over" in again.out, "installed later, its part comes over then"
    assert "memory entries: 0 came over, 3 already here" in again.out


def test_another_tools_state_db_that_no_importer_knows_is_refused_in_one_line(
    hermes, tmp_path, monkeypatch
):
    import sqlite3

    home = tmp_path / "other-tool"
    home.mkdir()
    with sqlite3.connect(home / "state.db") as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    before = (home / "state.db").read_bytes()
    monkeypatch.setenv("HERMES_HOME", str(home))
    result = hermes("status")
    assert result.code == 1
    [line] = result.err.strip().splitlines()
    assert "not a Hermes state store" in line and "hermes-agent" not in line
    assert (home / "state.db").read_bytes() == before


def _agent_backup(home: Path, zip_path: Path, prefix: str = "") -> Path:
    """A zip laid out as hermes-agent 0.19's `hermes backup` writes one (hermes_cli/backup.py):
    the home's files at the root (or under `.hermes/` for a zipped folder), and a memory
    provider's files from outside the home under `_external/`."""
    import zipfile

    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(home.rglob("*")):
            if path.is_file() and not path.name.endswith(("-wal", "-shm")):
                archive.write(path, arcname=prefix + path.relative_to(home).as_posix())
        archive.writestr("_external/home/ada/.honcho/config.json", "{}")
    return zip_path


@pytest.mark.parametrize("prefix", ["", ".hermes/"])
def test_a_hermes_agent_backup_zip_is_imported_and_left_as_it_was(hermes, source, tmp_path, prefix):
    zip_path = _agent_backup(source, tmp_path / "hermes-backup.zip", prefix)
    before = zip_path.read_bytes()
    result = hermes("import", "hermes-agent", str(zip_path), "--yes")
    assert result.code == 0, result.err
    assert "sessions: 6 came over" in result.out
    assert f"{zip_path} -> {hermes.home}" in result.out  # the zip is named, not a temp folder
    assert zip_path.read_bytes() == before
    found = hermes("sessions", "search", "hermes-fixture-marker-7")
    assert found.code == 0 and "fixture-marke" in found.out, found.err
    assert not (hermes.home / "_external").exists()


def test_a_zip_that_is_not_a_hermes_agent_backup_is_refused_in_one_line(hermes, tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "photos.zip", "w") as archive:
        archive.writestr("holiday.jpg", b"\xff\xd8")
    result = hermes("import", "hermes-agent", str(tmp_path / "photos.zip"), "--yes")
    assert result.code == 1
    assert f"the zip {tmp_path / 'photos.zip'} has no state.db, config.yaml" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_zip_made_on_windows_with_backslashes_is_imported(hermes, source, tmp_path):
    import zipfile

    zip_path = tmp_path / "windows.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        for path in sorted(source.rglob("*")):
            if path.is_file() and not path.name.endswith(("-wal", "-shm")):
                archive.write(path, arcname=path.relative_to(source).as_posix().replace("/", "\\"))
    result = hermes("import", "hermes-agent", str(zip_path), "--yes")
    assert result.code == 0, result.err
    assert "sessions: 6 came over" in result.out


def test_its_boards_come_over_with_tasks_comments_links_and_attachments(hermes, source):
    with sqlite3.connect(f"file:{source / 'kanban.db'}?mode=ro&immutable=1", uri=True) as db:
        theirs = dict(db.execute("SELECT title, id FROM tasks").fetchall())
    before = digest(source)
    result = hermes("import", "hermes-agent", str(source), "--yes")
    assert result.code == 0, result.err
    assert digest(source) == before
    assert "kanban tasks: 4 came over" in result.out
    assert "kanban.db" not in result.out.split("left")[-1]  # nothing of it left behind

    listed = json.loads(hermes("kanban", "list", "--all-boards", "--json").out)
    found = {task["title"]: task for task in listed}
    invoices, taxes, call = (
        found["Collect the invoices"],
        found["File the tax return"],
        found["Call the accountant"],
    )
    assert invoices["id"] == theirs["Collect the invoices"]  # hermes-agent's ids are kept
    assert invoices["status"] == "done" and invoices["assignee"] == "alice"
    assert invoices["priority"] == 2 and invoices["body"] == "All of 2026, as PDFs."
    assert taxes["status"] == "ready"  # its parent is done
    assert call["status"] == "blocked"
    assert found["Plant the tomatoes"]["board"] == "garden"

    shown = json.loads(hermes("kanban", "show", taxes["id"], "--json").out)
    assert shown["parents"] == [invoices["id"]]
    assert shown["comments"][0][:2] == ["bob", "Use the new form this year."]
    done = json.loads(hermes("kanban", "show", invoices["id"], "--json").out)
    assert done["comments"][0][:2] == ["alice", "Two are still missing from March."]
    assert [run["outcome"] for run in done["runs"]] == ["completed"]
    assert "All 41 invoices are in invoices/2026." in json.dumps(done)
    kinds = [event["kind"] for event in done["events"]]
    assert kinds[0] == "created" and "completed" in kinds and kinds[-1] == "imported"
    blocked = json.loads(hermes("kanban", "show", call["id"], "--json").out)
    ((_number, name, path, _size),) = blocked["attachments"]
    assert name == "number.txt" and Path(path).read_text() == "The accountant's number: 555-0100\n"
    assert str(hermes.home) in path

    again = hermes("import", "hermes-agent", str(source), "--yes")
    assert again.code == 0, again.err
    assert len(json.loads(hermes("kanban", "list", "--all-boards", "--json").out)) == 4
