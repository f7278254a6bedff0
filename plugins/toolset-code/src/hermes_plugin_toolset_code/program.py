"""The one file a script runs as: written into the session's environment, run there with
``python3 -I``, removed when it ends.

It installs the ``hermes_tools`` module, bounds the process's memory, and runs the model's
script. A tool call travels like this: the script writes ``call-N.json`` in the run's
folder and then one short line, the frame, to its stdout; Hermes, which reads that stdout
as it arrives, takes the frame out of the output, runs the call and writes
``result-N.json``, which the script waits for. The frame is shorter than PIPE_BUF, so it
reaches the pipe whole even when the script's children write too. The channel needs
nothing from a backend but running a command with streamed stdout and writing a file, so
it works the same on this machine, in a container and over SSH.
"""

from __future__ import annotations

from string import Template

__all__ = ["CLEAN_FLAG", "program_source"]

CLEAN_FLAG = "--clean"
"""``python3 run.py --clean`` removes the run's folder (after a script that was killed)."""

_PROGRAM = Template('''\
# Written by Hermes for one execute_code call; removed when it ends.
import json
import linecache
import os
import shutil
import sys
import threading
import time
import types

_FRAME = $frame
_DIR = os.path.dirname(os.path.abspath(__file__))
_MEMORY_BYTES = $memory_bytes
_SCRIPT = $script
_FUNCTIONS = $functions


class ToolCallRefused(RuntimeError):
    """Hermes did not run the call: a tool the script may not call, or a limit reached."""


_lock = threading.Lock()
_calls = [0]


def call_tool(name, **arguments):
    """Call the tool ``name`` with ``arguments``; its result text."""
    with _lock:
        _calls[0] += 1
        number = _calls[0]
        request = os.path.join(_DIR, "call-%d.json" % number)
        with open(request + ".part", "w", encoding="utf-8") as out:
            json.dump({"tool": name, "arguments": arguments}, out, default=str)
        os.replace(request + ".part", request)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os.write(1, ("%s%d\\n" % (_FRAME, number)).encode())
        answer = os.path.join(_DIR, "result-%d.json" % number)
        pause = 0.0002
        while True:
            try:
                with open(answer, encoding="utf-8") as reply_file:
                    reply = json.load(reply_file)
                break
            except (OSError, ValueError):  # not there yet, or still being written
                time.sleep(pause)
                pause = min(pause * 1.5, 0.02)
        for path in (request, answer):
            try:
                os.unlink(path)
            except OSError:
                pass
    if reply.get("refused"):
        raise ToolCallRefused(reply["content"])
    return reply["content"]


def _install_tools():
    module = types.ModuleType("hermes_tools", "The session's tools, as functions.")
    module.call_tool = call_tool
    module.ToolCallRefused = ToolCallRefused
    exec(compile(_FUNCTIONS, "<hermes_tools>", "exec"), module.__dict__)
    sys.modules["hermes_tools"] = module
    return module


def _bound_memory():
    if not _MEMORY_BYTES:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_BYTES, _MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass  # not bounded where the platform cannot (said in the docs)


def _main():
    if sys.argv[1:] == [$clean_flag]:
        shutil.rmtree(_DIR, ignore_errors=True)
        return
    tools = _install_tools()
    _bound_memory()
    lines = _SCRIPT.splitlines(True)
    linecache.cache["<script>"] = (len(_SCRIPT), None, lines, "<script>")
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    namespace.update((name, getattr(tools, name)) for name in tools.__all__)
    sys.argv = ["<script>"]
    try:
        exec(compile(_SCRIPT, "<script>", "exec"), namespace)
    except SystemExit:
        raise
    except BaseException as exc:  # the traceback from the script's own frames, with its lines
        import traceback

        frames = exc.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename != "<script>":
            frames = frames.tb_next
        traceback.print_exception(type(exc), exc, frames or exc.__traceback__)
        sys.exit(1)
    finally:
        shutil.rmtree(_DIR, ignore_errors=True)


_main()
''')


def program_source(*, frame: str, script: str, functions: str, memory_bytes: int) -> str:
    """The program for one run: ``frame`` starts each call's line on stdout."""
    return _PROGRAM.substitute(
        frame=repr(frame),
        memory_bytes=repr(memory_bytes),
        functions=repr(functions),
        script=repr(script),
        clean_flag=repr(CLEAN_FLAG),
    )
