"""The program a script runs in: sent on the stdin of ``python3 -I -B -`` in the session's
environment, so nothing of it is ever written where another user could read it.

It makes a private folder (0700), names it to Hermes in its first frame, installs the
``hermes_tools`` module, bounds the process's memory and runs the model's script. A tool
call travels like this: the script writes ``call-ID.json`` in that folder and then one short
line, the frame, to the stdout it started with; Hermes, which reads that stdout as it
arrives, takes the frame out of the output, runs the call and writes ``result-ID.json``,
which the script waits for. The frame is shorter than PIPE_BUF, so it reaches the pipe
whole even when the script's children write too, and it goes to a copy of the original
stdout, so a script that redirects its own stdout keeps its channel. IDs carry the process
id, so a script that forks keeps its calls apart. The channel needs nothing from a backend
but running a command with stdin and streamed stdout, and writing a file, so it works the
same on this machine, in a container and over SSH.
"""

from __future__ import annotations

from string import Template

__all__ = ["FOLDER_FRAME", "program_source"]

FOLDER_FRAME = "folder="
"""After the frame marker: the first line names the run's folder (``MARKER folder=PATH``);
every other one is a call's ID (``MARKER PID-N``)."""

_PROGRAM = Template('''\
# Sent by Hermes for one execute_code call.
import json
import linecache
import os
import shutil
import sys
import tempfile
import threading
import time
import types

_FRAME = $frame
_MEMORY_BYTES = $memory_bytes
_SCRIPT = $script
_FUNCTIONS = $functions
_OWNER = os.getpid()
_CHANNEL = os.dup(1)  # the frames' own copy of stdout: the script may redirect fd 1
_DIR = tempfile.mkdtemp(prefix="hermes-code-")  # 0700


class ToolCallRefused(RuntimeError):
    """Hermes did not run the call: a tool the script may not call, or a limit reached."""


def _json_value(value):
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(
        "tool arguments are JSON values (str, int, float, bool, None, list, dict); got %s%s"
        % (type(value).__name__, ": decode it to str first" if isinstance(value, bytes) else "")
    )


def _send(text):
    os.write(_CHANNEL, ("%s%s\\n" % (_FRAME, text)).encode())


_lock = threading.Lock()
_calls = [0]


def call_tool(name, **arguments):
    """Call the tool ``name`` with ``arguments``; its result text."""
    request = json.dumps({"tool": name, "arguments": arguments}, default=_json_value)
    with _lock:
        _calls[0] += 1
        ident = "%d-%d" % (os.getpid(), _calls[0])
        path = os.path.join(_DIR, "call-%s.json" % ident)
        with open(path + ".part", "w", encoding="utf-8") as out:
            out.write(request)
        os.replace(path + ".part", path)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        _send(ident)
        answer = os.path.join(_DIR, "result-%s.json" % ident)
        pause = 0.0002
        while True:
            try:
                with open(answer, encoding="utf-8") as reply_file:
                    reply = json.load(reply_file)
                break
            except (OSError, ValueError):  # not there yet, or still being written
                time.sleep(pause)
                pause = min(pause * 1.5, 0.02)
        for done in (path, answer):
            try:
                os.unlink(done)
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
    _send("$folder_frame" + _DIR)
    # Read from stdin, this program has no file: without the name "<stdin>" a child the
    # script starts with multiprocessing's "spawn" does not look for one to run again.
    vars(sys.modules["__main__"]).pop("__file__", None)
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
        if os.getpid() == _OWNER:  # not in a child the script forked
            shutil.rmtree(_DIR, ignore_errors=True)


if __name__ == "__main__":  # a child started with "spawn" imports this: it must not run
    _main()
''')


def program_source(*, frame: str, script: str, functions: str, memory_bytes: int) -> str:
    """The program for one run: ``frame`` starts each line it sends Hermes."""
    return _PROGRAM.substitute(
        frame=repr(frame),
        memory_bytes=repr(memory_bytes),
        functions=repr(functions),
        script=repr(script),
        folder_frame=FOLDER_FRAME,
    )
