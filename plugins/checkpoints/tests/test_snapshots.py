"""Snapshots taken by the plugin's hooks, called through a plugin manager as the kernel
calls them, in a real git repository: which calls make one, and the bounds."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import hermes_plugin_checkpoints
import pytest
from hermes_plugin_checkpoints.shadow import ShadowRepo

from hermes_sdk import SessionInfo, ToolCall

from .conftest import fingerprint


@pytest.fixture
def hooks(register_plugin, hermes_plugin_manager):
    register_plugin(hermes_plugin_checkpoints)
    return hermes_plugin_manager.hook


def start(hooks, folder: Path, home: Path, session_id: str = "s1") -> None:
    """A session starts, as the kernel starts one: with the config it loaded."""
    import yaml

    path = home / "config.yaml"
    config = yaml.safe_load(path.read_text()) if path.exists() else {}
    session = SessionInfo(
        session_id=session_id, source="cli", cwd=str(folder), home=str(home), config=config
    )
    hooks.hermes_on_session_start(session=session)


def call(hooks, tool: str, session_id: str = "s1", parent: str | None = None, **arguments):
    call_id = f"c{call.counter}"
    call.counter += 1
    hooks.hermes_pre_tool_call(
        call=ToolCall(
            session_id=session_id,
            call_id=call_id,
            tool=tool,
            arguments=arguments,
            parent_call_id=parent,
        )
    )


call.counter = 0


def checkpoints(home: Path, folder: Path):
    return ShadowRepo(home, folder).checkpoints()


def test_write_file_inside_the_folder_makes_one_and_outside_none(hooks, workspace, home, tmp_path):
    start(hooks, workspace, home)
    call(hooks, "write_file", path=str(tmp_path / "elsewhere.txt"), content="x")
    call(hooks, "read_file", path="notes.txt")
    assert checkpoints(home, workspace) == []
    repository = fingerprint(workspace / ".git")
    call(hooks, "write_file", path="notes.txt", content="x")
    (made,) = checkpoints(home, workspace)
    assert (made.tool, made.target, made.session) == ("write_file", "notes.txt", "s1")
    call(hooks, "patch", path="notes.txt", old_string="a", new_string="b")
    assert len(checkpoints(home, workspace)) == 1  # nothing changed: no second one
    assert fingerprint(workspace / ".git") == repository
    assert not (workspace / ".git" / "checkpoints").exists()


def test_a_terminal_command_that_writes_makes_one_and_ls_does_not(hooks, workspace, home):
    start(hooks, workspace, home)
    call(hooks, "terminal", command="ls -la")
    assert checkpoints(home, workspace) == []
    call(hooks, "terminal", command="echo x > f")
    (made,) = checkpoints(home, workspace)
    assert made.what == "before terminal echo x > f"


def test_calls_made_by_a_script_count_the_same(hooks, workspace, home):
    start(hooks, workspace, home)
    call(hooks, "write_file", parent="c-script", path="notes.txt", content="x")
    (made,) = checkpoints(home, workspace)
    assert made.tool == "write_file"


def test_the_oldest_are_dropped_past_max_count(hooks, workspace, home):
    (home / "config.yaml").write_text("checkpoints:\n  max_count: 3\n")
    start(hooks, workspace, home)
    for number in range(5):
        (workspace / "notes.txt").write_text(f"version {number}\n")
        call(hooks, "write_file", path="notes.txt", content="next")
    kept = checkpoints(home, workspace)
    assert [c.number for c in kept] == [5, 4, 3]
    repo = ShadowRepo(home, workspace)
    first_version = (
        subprocess.run(
            ["git", "hash-object", "--stdin"], input=b"version 0\n", capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    there = subprocess.run(
        ["git", f"--git-dir={repo.git_dir}", "cat-file", "-e", first_version], check=False
    )
    assert there.returncode != 0, "the dropped checkpoint's file version is still stored"


@pytest.mark.parametrize(
    ("section", "said"),
    [
        ("max_files: 2", "has 4 files, over checkpoints.max_files (2); not snapshotted"),
        ("max_mb: 1", "holds more than 1 MB (checkpoints.max_mb); not snapshotted"),
    ],
)
def test_a_folder_over_the_bounds_is_skipped_with_one_log_line(
    hooks, workspace, home, caplog, section, said
):
    (home / "config.yaml").write_text(f"checkpoints:\n  {section}\n")
    (workspace / "data.bin").write_bytes(b"\0" * 1_100_000)
    start(hooks, workspace, home)
    with caplog.at_level(logging.DEBUG, logger="hermes.checkpoints"):
        call(hooks, "write_file", path="notes.txt", content="x")
        call(hooks, "write_file", path="notes.txt", content="y")
    lines = [r for r in caplog.records if said in r.getMessage()]
    assert [r.levelno for r in lines] == [logging.INFO, logging.DEBUG]  # said once
    assert checkpoints(home, workspace) == []


def test_the_home_folder_is_never_snapshotted(hooks, workspace, home, caplog, monkeypatch):
    monkeypatch.setenv("HOME", str(workspace))
    start(hooks, workspace, home)
    with caplog.at_level(logging.INFO, logger="hermes.checkpoints"):
        call(hooks, "write_file", path="notes.txt", content="x")
    assert "is your home folder: too big to snapshot" in caplog.text
    assert not (home / "checkpoints").exists()


def test_out_of_time_the_tool_runs_without_one(hooks, workspace, home, caplog):
    (home / "config.yaml").write_text("checkpoints:\n  timeout_seconds: 0.000001\n")
    start(hooks, workspace, home)
    with caplog.at_level(logging.INFO, logger="hermes.checkpoints"):
        call(hooks, "write_file", path="notes.txt", content="x")  # returns: no exception
    assert "no checkpoint before write_file" in caplog.text
    assert checkpoints(home, workspace) == []


def test_disabled_takes_none(hooks, workspace, home):
    (home / "config.yaml").write_text("checkpoints:\n  enabled: false\n")
    start(hooks, workspace, home)
    call(hooks, "write_file", path="notes.txt", content="x")
    assert not (home / "checkpoints").exists()


def test_the_session_end_packs_what_its_snapshots_left_loose(hooks, workspace, home):
    for number in range(300):
        (workspace / "src" / f"module_{number}.py").write_text(f"VALUE = {number}\n")
    start(hooks, workspace, home)
    call(hooks, "write_file", path="notes.txt", content="x")
    repo = ShadowRepo(home, workspace)

    def objects() -> dict[str, str]:
        out = subprocess.run(
            ["git", f"--git-dir={repo.git_dir}", "count-objects", "-v"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return dict(line.split(": ") for line in out.splitlines())

    assert int(objects()["count"]) > 300
    session = SessionInfo(session_id="s1", source="cli", cwd=str(workspace), home=str(home))
    hooks.hermes_on_session_end(session=session, reason="exit")
    assert (objects()["count"], objects()["packs"]) == ("0", "1")
    assert [c.number for c in repo.checkpoints()] == [1]


def test_without_git_the_tool_runs_and_doctor_says_how_to_get_it(
    hooks, workspace, home, caplog, monkeypatch, tmp_path
):
    from hermes_sdk import HealthContext

    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    start(hooks, workspace, home)
    with caplog.at_level(logging.INFO, logger="hermes.checkpoints"):
        call(hooks, "write_file", path="notes.txt", content="x")
    assert "git is not installed" in caplog.text
    ((finding,),) = hooks.hermes_doctor_checks(context=HealthContext(home=str(home)))
    assert (finding.level, finding.fix) == (
        "warning",
        "install git (Debian/Ubuntu: apt install git)",
    )
