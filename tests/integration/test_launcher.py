"""The README's launcher and a newcomer's whole path, in a throwaway copy of this checkout.

``./scripts/hermes`` is what the README tells people to run. It used to sync the workspace
exactly on every call, which deleted every plugin ``hermes plugins install`` had just added.
Here a new author goes the way the author guide times: scaffold a tools plugin, edit it, run
its tests, install it with the launcher, list it, have the model call it, and uninstall it;
a change to the workspace in between makes the launcher sync again, and the plugin stays.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_testkit import Reply, ScriptedOpenAIServer

from .conftest import REPO, Run, uv_command

pytestmark = pytest.mark.venv


def _copy_checkout(dest: Path) -> Path:
    """The files git knows (tracked, and new ones not ignored): what a fresh clone holds."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = REPO / os.fsdecode(name)
        if source.is_file():  # a file deleted in the work tree is still listed as tracked
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


class Newcomer:
    """Runs commands in the copy as a user at a shell would, timing each step."""

    def __init__(self, checkout: Path, home: Path) -> None:
        self.checkout = checkout
        self.timings: dict[str, float] = {}
        # The user's own uv settings stay: the cache they point at (UV_CACHE_DIR) is where
        # the offline run finds its packages. Only what says "this project's environment"
        # (UV_PROJECT_ENVIRONMENT) and Hermes's own settings go.
        environ = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("HERMES_")
            and key not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"}
        }
        # The user's shell: no test environment on PATH, so the launcher finds the same
        # python3 the test command's own setup found (and uv's cached builds for it).
        outside = [
            entry
            for entry in environ.get("PATH", "").split(os.pathsep)
            if entry and not Path(entry).resolve().is_relative_to(Path(sys.prefix).resolve())
        ]
        environ.update(
            {
                "PATH": os.pathsep.join(outside),
                "HERMES_HOME": str(home),
                "UV": uv_command(),  # the launcher installs uv only where there is none
                "UV_OFFLINE": "1",  # everything comes from uv's cache, as on a second machine
            }
        )
        self.environ = environ

    def run(self, step: str, *argv: str, cwd: Path | None = None, timeout: float = 600) -> Run:
        started = time.perf_counter()
        done = subprocess.run(
            list(argv),
            cwd=cwd or self.checkout,
            env=self.environ,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        self.timings[step] = self.timings.get(step, 0.0) + time.perf_counter() - started
        return Run(done.returncode, done.stdout, done.stderr)

    def hermes(self, step: str, *args: str, cwd: Path | None = None) -> Run:
        return self.run(step, str(self.checkout / "scripts" / "hermes"), *args, cwd=cwd)


@pytest.fixture
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


def test_a_plugin_installed_with_the_launcher_stays_and_works(
    tmp_path: Path, model: ScriptedOpenAIServer
) -> None:
    checkout = _copy_checkout(tmp_path / "hermes")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {model.base_url}\n  default: test-model\nagent:\n  retries: 1\n"
    )
    user = Newcomer(checkout, home)

    first = user.hermes("set up (first run)", "plugins", "list")
    assert first.code == 0, first.err
    assert "word-count" not in first.out

    # Scaffold, edit, test: the author guide's first three steps.
    work = tmp_path / "work"
    work.mkdir()
    python = str(checkout / ".venv" / "bin" / "python")
    scaffold = user.run(
        "scaffold", str(checkout / ".venv" / "bin" / "hermes-sdk"), "new-plugin",
        "--kind", "tools", "word-count", "--dir", str(work),
    )  # fmt: skip
    assert scaffold.code == 0, scaffold.err
    assert "then: hermes plugins install . --enable --yes" in scaffold.out
    plugin = work / "hermes-plugin-word-count"
    module = plugin / "src" / "hermes_plugin_word_count" / "__init__.py"
    module.write_text(
        module.read_text().replace(
            'return f"{len(words)} words"', 'return f"{len(words)} words, {len(text)} characters"'
        )
    )
    tests = plugin / "tests" / "test_word_count.py"
    tests.write_text(
        tests.read_text()
        .replace('"3 words"', '"3 words, 13 characters"')
        .replace('"0 words"', '"0 words, 0 characters"')
    )
    tested = user.run("test", python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=plugin)
    assert tested.code == 0, tested.out + tested.err

    # Install with the launcher, as the scaffold's "then:" line says.
    installed = user.hermes("install", "plugins", "install", ".", "--enable", "--yes", cwd=plugin)
    assert installed.code == 0, installed.out + installed.err
    assert "word-count: installed and verified" in installed.out
    assert "enabled" in installed.out
    assert "`uv sync --inexact`" in installed.err  # the warning about plain `uv sync`

    listed = user.hermes("list", "plugins", "list")
    assert listed.code == 0, listed.err
    assert any(line.startswith("word-count") for line in listed.out.splitlines()), listed.out

    # A change to the workspace: the next launch syncs again, and keeps the plugin.
    stamp = checkout / ".venv" / ".hermes-synced-from"
    synced_from = stamp.read_text()
    root_pyproject = checkout / "pyproject.toml"
    root_pyproject.write_text(root_pyproject.read_text() + "\n# touched by the launcher test\n")
    shown = user.hermes("re-sync and show", "tools", "show", "count_words")
    assert shown.code == 0, shown.out + shown.err
    assert stamp.read_text() != synced_from, "the launcher did not sync after the change"
    assert "from plugin word-count" in shown.out and '"text"' in shown.out

    # The model calls it; its result goes back in the next request.
    model.queue(Reply.tool_call("count_words", {"text": "one two three"}), Reply.say("Three."))
    chat = user.hermes("use", "chat", "-q", "how many words in: one two three")
    assert chat.code == 0, chat.err
    assert chat.out.strip().endswith("Three.")
    tool_messages = [m for m in model.requests[-1].json["messages"] if m["role"] == "tool"]
    assert tool_messages and tool_messages[-1]["content"] == "3 words, 13 characters"

    removed = user.hermes("uninstall", "plugins", "uninstall", "word-count", "--yes")
    assert removed.code == 0, removed.out + removed.err
    after = user.hermes("list", "plugins", "list")
    assert not any(line.startswith("word-count") for line in after.out.splitlines()), after.out

    steps = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in user.timings.items())
    print(f"\nnewcomer path: {steps}")  # the figures the author guide quotes
