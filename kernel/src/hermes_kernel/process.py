"""How the ``hermes`` process starts and leaves: the two costs of a short command that are
Python's, not ours.

Starting imports some 500 modules and builds the agent, and the cyclic garbage collector,
triggered by those allocations, walks every object made so far again and again: 60 ms of a
one-shot. So collection waits until start-up is over (:func:`started`: the runtime calls it
once the agent is built), and what start-up made is then frozen out of later collections
(``gc.freeze``), which also keeps a long-running front-end's collections short.

Leaving tears the interpreter down, module by module and object by object: 150 ms of a
one-shot. Once the command has returned, the process does what interpreter shutdown does
first (it waits for the threads that are not daemons, and runs the exit handlers: logs,
models, temporary folders), flushes its output, and ends there (``os._exit``): nothing is
left to lose. (Both steps are CPython's own functions; on another interpreter it exits as
usual.)
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading

__all__ = ["START_UP_SECONDS", "exit_status", "leave", "started", "starting"]

_collecting_later = False

START_UP_SECONDS = 5.0
"""The longest start-up goes without collecting: a command that runs for long without ever
building an agent (``hermes logs --follow``) collects from then on."""


def starting() -> None:
    """Collect no cycles until :func:`started`, or :data:`START_UP_SECONDS` from now."""
    global _collecting_later  # noqa: PLW0603 - one process, one start-up
    if gc.isenabled():
        gc.disable()
        _collecting_later = True
        timer = threading.Timer(START_UP_SECONDS, started)
        timer.daemon = True
        timer.start()


def started() -> None:
    """Start-up is over (the agent is built): collect again, leaving out what start-up made,
    which lives as long as the process anyway (a garbage cycle it left behind stays too).
    Called more than once, or without :func:`starting`, it does nothing."""
    global _collecting_later  # noqa: PLW0603
    if _collecting_later:
        _collecting_later = False
        gc.freeze()
        gc.enable()


def exit_status(exc: SystemExit) -> int:
    """The status Python itself would exit with for ``exc``, printing a message as it does."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def leave(status: int) -> None:
    """End the process with ``status`` now that the command is done: what interpreter
    shutdown does first (join the threads that are not daemons, waking idle pools; run the
    exit handlers), then flush and end, without the teardown that follows."""
    started()
    join_threads = getattr(threading, "_shutdown", None)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if join_threads is None or run_exit_handlers is None:  # not CPython: the usual exit
        sys.exit(status)
    join_threads()
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or a closed stream
            status = status or 120  # what Python exits with when the final flush fails
    os._exit(status)
