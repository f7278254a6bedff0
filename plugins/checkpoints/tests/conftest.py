"""A real git repository to work in, a HERMES_HOME, and the real ``hermes`` command."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ORIGINAL = "the original notes\n"


def git(folder: Path, *args: str) -> str:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    environment.update(
        GIT_AUTHOR_NAME="User",
        GIT_AUTHOR_EMAIL="user@example.invalid",
        GIT_COMMITTER_NAME="User",
        GIT_COMMITTER_EMAIL="user@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    done = subprocess.run(
        ["git", *args], cwd=folder, env=environment, capture_output=True, text=True, check=True
    )
    return done.stdout


def fingerprint(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` with a hash of its content (folders and links too)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[name] = "link:" + os.readlink(path)
        elif path.is_dir():
            found[name] = "folder"
        else:
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The user's project: a git repository with one commit, and an ignored log file."""
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "notes.txt").write_text(ORIGINAL)
    (folder / "src" / "app.py").write_text("print('hello')\n")
    (folder / ".gitignore").write_text("*.log\n")
    git(folder, "init", "--quiet")
    git(folder, "add", ".")
    git(folder, "commit", "--quiet", "-m", "first")
    (folder / "build.log").write_text("ignored by the user's .gitignore\n")
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def hermes_environment(home: Path, model_url: str | None = None) -> dict[str, str]:
    if model_url is not None:
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {model_url}\n  default: test-model\n"
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
        )
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "GIT_"))}
    environment.update(HERMES_HOME=str(home), OPENAI_API_KEY="sk-test")
    environment.pop("VIRTUAL_ENV", None)
    return environment


def hermes(
    environment: dict[str, str], folder: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """The real ``hermes`` command, run in ``folder``."""
    return subprocess.run(
        [sys.executable, "-m", "hermes_kernel.cli.main", *args],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
