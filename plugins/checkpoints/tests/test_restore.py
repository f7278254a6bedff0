"""Restoring: ``hermes checkpoints`` (the real command) and the ``/rollback`` handler."""

from __future__ import annotations

import pytest
from hermes_plugin_checkpoints import rollback
from hermes_plugin_checkpoints.shadow import CheckpointError, ShadowRepo

from hermes_sdk import SlashContext

from .conftest import ORIGINAL, fingerprint, hermes, hermes_environment


def snapshot(repo: ShadowRepo, target: str) -> str:
    made = repo.snapshot(tool="write_file", target=target, session="s1")
    assert made.checkpoint is not None
    return made.checkpoint.id


def test_restore_of_one_path_and_a_bad_id(workspace, home):
    repo = ShadowRepo(home, workspace)
    checkpoint = snapshot(repo, "notes.txt")
    (workspace / "notes.txt").write_text("changed\n")
    (workspace / "src" / "app.py").write_text("changed too\n")
    environment = hermes_environment(home)

    restored = hermes(
        environment, workspace / "src", "checkpoints", "restore", checkpoint, "../notes.txt"
    )
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith(f"Restored notes.txt in {workspace} as it was before")
    assert (workspace / "notes.txt").read_text() == ORIGINAL
    assert (workspace / "src" / "app.py").read_text() == "changed too\n"  # not in PATH

    for wrong, said in [
        ("0123456789ab", f"no checkpoint 0123456789ab for {workspace}"),
        ("not-an-id", "'not-an-id' is not a checkpoint id"),
    ]:
        refused = hermes(environment, workspace, "checkpoints", "restore", wrong)
        assert refused.returncode == 1
        assert refused.stdout == ""
        (line,) = refused.stderr.strip().splitlines()
        assert said in line


def test_list_shows_id_time_tool_and_file_from_a_subfolder_too(workspace, home):
    repo = ShadowRepo(home, workspace)
    first = snapshot(repo, "notes.txt")
    (workspace / "notes.txt").write_text("changed\n")
    second = repo.snapshot(tool="terminal", target="sed -i s/a/b/ src/app.py").checkpoint
    assert second is not None
    listed = hermes(hermes_environment(home), workspace / "src", "checkpoints", "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"Checkpoints of {workspace}, newest first:"
    assert lines[2].split()[:2] == ["1", second.id]
    assert lines[2].endswith("before terminal sed -i s/a/b/ src/app.py")
    assert lines[3].split()[:2] == ["2", first]
    assert lines[3].endswith("before write_file notes.txt")


def context(workspace, home) -> SlashContext:
    return SlashContext(
        session_id=None, home=str(home), cwd=str(workspace), provider="p", model="m"
    )


def test_rollback_goes_n_back_removes_new_files_and_can_be_undone(workspace, home):
    repo = ShadowRepo(home, workspace)
    snapshot(repo, "notes.txt")  # 2 back: the original
    (workspace / "notes.txt").write_text("second\n")
    snapshot(repo, "notes.txt")  # 1 back
    (workspace / "notes.txt").write_text("third\n")
    (workspace / "new.txt").write_text("made after both\n")
    (workspace / "src" / "app.py").unlink()
    repository = fingerprint(workspace / ".git")
    slash = context(workspace, home)

    said = rollback("2", slash)
    assert (workspace / "notes.txt").read_text() == ORIGINAL
    assert not (workspace / "new.txt").exists()
    assert "Put back: notes.txt, src/app.py.\nRemoved (made since): new.txt." in said
    assert (workspace / "src" / "app.py").read_text() == "print('hello')\n"
    assert (workspace / "build.log").exists()  # ignored by the user's .gitignore: untouched
    assert fingerprint(workspace / ".git") == repository

    undo = said.splitlines()[-1].split()[4].rstrip(",")  # "To undo this: /rollback ID, ..."
    rollback(undo, slash)
    assert (workspace / "notes.txt").read_text() == "third\n"
    assert (workspace / "new.txt").read_text() == "made after both\n"

    rollback("", slash)  # 1 back, counting only the checkpoints taken before tools
    assert (workspace / "notes.txt").read_text() == "second\n"
    assert "Nothing differed" in rollback("", slash)
    assert "before restoring" in rollback("list", slash)


def test_rollback_says_what_is_wrong_in_one_line(workspace, home):
    slash = context(workspace, home)
    with pytest.raises(CheckpointError, match=r"no checkpoints of .* yet: nothing to roll back"):
        rollback("", slash)
    snapshot(ShadowRepo(home, workspace), "notes.txt")
    with pytest.raises(CheckpointError, match=r"only 1 checkpoint of .* to roll back to"):
        rollback("3", slash)
    with pytest.raises(CheckpointError, match="usage: /rollback"):
        rollback("1 2 3", slash)
