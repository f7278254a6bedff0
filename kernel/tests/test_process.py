"""The hermes process's start and exit (hermes_kernel.process): collection waits for the end
of start-up, and leaving skips the interpreter's teardown but nothing a normal exit does
first. Each case runs in a fresh interpreter, as the console script does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_leaving_waits_for_threads_runs_exit_handlers_and_keeps_the_status() -> None:
    done = python(
        """
        import atexit, sys, threading, time
        from hermes_kernel import process
        process.starting()
        atexit.register(lambda: print("exit handler ran", flush=True))
        def work():
            time.sleep(0.3)
            print("thread finished")
        threading.Thread(target=work).start()  # not a daemon: a normal exit waits for it
        print("buffered output", end="")  # not flushed yet: leaving must flush it
        sys.stderr.write("on stderr")
        process.leave(3)
        print("never printed")
        """
    )
    assert done.returncode == 3
    assert done.stdout.splitlines() == ["buffered outputthread finished", "exit handler ran"]
    assert done.stderr == "on stderr"


def test_collection_waits_for_the_end_of_start_up_then_leaves_start_up_out() -> None:
    done = python(
        """
        import gc
        from hermes_kernel import process
        process.starting()
        print(gc.isenabled())
        process.started()
        print(gc.isenabled(), gc.get_freeze_count() > 1000)
        process.started()  # a second call changes nothing
        print(gc.isenabled())
        """
    )
    assert done.stdout.split() == ["False", "True", "True", "True"], done.stderr


def test_a_long_start_up_collects_after_its_deadline() -> None:
    done = python(
        """
        import gc, time
        from hermes_kernel import process
        process.START_UP_SECONDS = 0.2
        process.starting()
        time.sleep(0.6)  # a command that never builds an agent (hermes logs --follow)
        print(gc.isenabled())
        """
    )
    assert done.stdout.split() == ["True"], done.stderr


def test_started_without_starting_does_not_touch_the_collector() -> None:
    """The runtime calls started() in every process (tests, a plugin's own script): only
    the console script's process changes its collector."""
    done = python(
        """
        import gc
        from hermes_kernel import process
        gc.disable()  # the embedding program's own choice
        process.started()
        print(gc.isenabled(), gc.get_freeze_count())
        """
    )
    assert done.stdout.split() == ["False", "0"], done.stderr


@pytest.mark.parametrize(
    ("args", "status", "where", "text"),
    [
        (["--version"], 0, "stdout", "hermes "),
        (["no-such-command"], 2, "stderr", "No such command 'no-such-command'"),
        (["config", "path"], 0, "stdout", "config.yaml"),
    ],
)
def test_the_console_script_exits_with_each_commands_status_and_output(
    tmp_path: Path, args: list[str], status: int, where: str, text: str
) -> None:
    hermes = Path(sys.executable).with_name("hermes")
    done = subprocess.run(
        [str(hermes), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"HERMES_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == status, done.stderr
    assert text in getattr(done, where)
