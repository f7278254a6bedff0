"""execute_code's handler against a real local backend and real tools (run directly by the
test kit's caller; the kernel's records and checks are tested through the agent in
tests/integration/test_execute_code.py), and its parts: the frames, the generated module,
the settings."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import ClassVar

import hermes_plugin_toolset_code
import hermes_plugin_toolset_files
import hermes_plugin_toolset_terminal
import pytest
from hermes_plugin_backend_local.backend import LocalBackend
from hermes_plugin_toolset_code.frames import FrameReader, KeptOutput
from hermes_plugin_toolset_code.settings import settings_from
from hermes_plugin_toolset_code.stubs import module_source, signature

from hermes_sdk import ToolSpec
from hermes_sdk.tooling import ToolContext, ToolFailed
from hermes_testkit import ToolsTests, call_with_tools, tool_context

FRAME = "\x1dhermes-call-abc:"


def tools_of(module) -> list[ToolSpec]:
    return list(module.hermes_tools())


def sibling_tools() -> list[ToolSpec]:
    return tools_of(hermes_plugin_toolset_files) + tools_of(hermes_plugin_toolset_terminal)


def context_in(folder: Path, **config) -> ToolContext:
    backend = LocalBackend(str(folder), {"PATH": "/usr/bin:/bin"})
    return tool_context(backend, home=str(folder), config={"code": config} if config else None)


def execute(context: ToolContext, code: str) -> str:
    (spec,) = tools_of(hermes_plugin_toolset_code)
    return asyncio.run(call_with_tools(spec, {"code": code}, context, sibling_tools()))


class TestCodeTools(ToolsTests):
    plugin = hermes_plugin_toolset_code
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    examples: ClassVar = {
        "execute_code": (
            {"code": "print(sorted(name for name in ['b', 'a']))"},
            lambda result: result.startswith("['a', 'b']\n[execute_code: 0 tool calls"),
        )
    }

    def context(self, tmp_path: Path) -> ToolContext:
        return context_in(tmp_path)

    def callable_tools(self, tmp_path: Path) -> list[ToolSpec]:
        return sibling_tools()


def test_a_script_calls_tools_and_reads_their_results(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    code = textwrap.dedent(
        """
        from hermes_tools import read_file, write_file
        write_file(path="b.txt", content="beta\\n")
        print(read_file(path="a.txt").strip())
        print(terminal(command="cat b.txt"))
        """
    )
    result = execute(context_in(tmp_path), code)
    assert "alpha" in result and "beta" in result
    assert result.endswith("[execute_code: 3 tool calls, " + result.split(", ")[-1])
    assert (tmp_path / "b.txt").read_text() == "beta\n"
    assert not list(Path("/tmp").glob(f"hermes-code-*/{tmp_path.name}"))


def test_output_between_calls_keeps_its_order_and_print_without_newline_survives(tmp_path):
    code = "print('one', end='')\nterminal(command='true')\nprint('two')\nprint('three', end='')\n"
    result = execute(context_in(tmp_path), code)
    assert result.startswith("onetwo\nthree\n[execute_code: 1 tool call,")


def test_a_failing_script_raises_a_readable_failure(tmp_path):
    with pytest.raises(ToolFailed) as failed:
        execute(context_in(tmp_path), "import sys\nprint('partial')\nsys.exit(3)\n")
    assert str(failed.value).startswith("the script failed (exit status 3)")
    assert "partial" in str(failed.value)


def test_a_missing_interpreter_says_what_to_fix(tmp_path):
    with pytest.raises(ToolFailed) as failed:
        execute(context_in(tmp_path, python="python9.9"), "print(1)")
    assert "python9.9 is not installed in this terminal backend (local)" in str(failed.value)
    assert "code.python" in str(failed.value)


def test_a_script_from_a_run_without_a_tool_caller_is_refused_in_one_line(tmp_path):
    (spec,) = tools_of(hermes_plugin_toolset_code)
    with pytest.raises(Exception, match="cannot call tools from inside a tool"):
        asyncio.run(spec.handler(code="print(1)", context=context_in(tmp_path)))


# --- the parts ------------------------------------------------------------------------------


def test_frames_split_across_chunks_are_found_and_taken_out():
    for size in (1, 2, 3, 7, 100):
        calls: list[str] = []
        output = KeptOutput(1000)
        reader = FrameReader(FRAME, calls.append, output)
        stream = (
            f"{FRAME}folder=/tmp/hermes-code-x\nbefore{FRAME}41-1\nmiddle\x1d not a frame"
            f"{FRAME}../../etc\n{FRAME}41-22\nafter"
        )
        for start in range(0, len(stream), size):
            reader.feed(stream[start : start + size])
        reader.finish()
        assert calls == ["folder=/tmp/hermes-code-x", "41-1", "41-22"], size
        assert output.text() == "beforemiddle\x1d not a frameafter", size


def test_kept_output_counts_what_it_cuts():
    output = KeptOutput(5)
    output.add("abc")
    output.add("defgh")
    assert (output.text(), output.cut, output.total) == ("abcde", 3, 8)


def test_functions_are_written_for_every_shape_of_schema():
    odd = ToolSpec(
        name="odd_tool",
        description="An odd tool. It has more to say.",
        handler=lambda **_: "",
        parameters={
            "type": "object",
            "properties": {"from": {"type": "string"}, "x-y": {"type": "string"}, "n": {}},
            "required": ["n"],
        },
    )
    bare = ToolSpec(name="bare", description="No arguments at all.", handler=lambda: "")
    assert signature(odd) == "odd_tool(n, **more)"
    assert "def odd_tool(n, **more):" in module_source([odd])
    assert signature(bare) == "bare()"
    namespace: dict[str, object] = {}
    sent: list[tuple[str, dict]] = []
    namespace["call_tool"] = lambda name, **arguments: sent.append((name, arguments)) or "ok"
    exec(module_source([odd, bare]), namespace)
    namespace["odd_tool"](n=1, **{"from": "here"})
    namespace["bare"]()
    assert sent == [("odd_tool", {"n": 1, "from": "here"}), ("bare", {})]
    with pytest.raises(TypeError):
        namespace["odd_tool"]()  # a required argument left out fails in the script itself


def test_settings_refuse_a_tool_a_script_may_never_call():
    with pytest.raises(Exception, match="memory can never be called from a script"):
        settings_from({"code": {"tools": ["terminal", "memory"]}})


def test_doctor_names_the_interpreter_and_a_bad_section(tmp_path):
    from hermes_plugin_toolset_code.health import findings

    from hermes_sdk import HealthContext

    (good,) = findings(HealthContext(home=str(tmp_path), config={}))
    assert good.level == "ok" and good.message.startswith("code: scripts run with /")
    (missing,) = findings(HealthContext(home=str(tmp_path), config={"code": {"python": "nope3"}}))
    assert missing.level == "error" and "nope3 is not on PATH" in missing.message
    (bad,) = findings(HealthContext(home=str(tmp_path), config={"code": {"tools": ["memory"]}}))
    assert bad.level == "error" and "memory" in bad.message


def test_a_script_that_forks_or_spawns_keeps_its_calls_apart_and_runs_once(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    code = textwrap.dedent(
        """
        import multiprocessing, os
        print("started", flush=True)  # else the child's copy of the buffer prints it again
        pid = os.fork()
        if pid == 0:
            open("child.txt", "w").write(read_file("a.txt"))
            os._exit(0)
        mine = read_file("b.txt")
        os.waitpid(pid, 0)
        print("parent got beta:", "beta" in mine)
        print("child got alpha:", "alpha" in open("child.txt").read())
        child = multiprocessing.get_context("spawn").Process(target=print, args=("spawned",))
        child.start()
        child.join()
        """
    )
    result = execute(context_in(tmp_path), code)
    assert result.count("started") == 1  # a spawned child does not run the script again
    assert "parent got beta: True" in result and "child got alpha: True" in result
    assert "spawned" in result
    assert "[execute_code: 2 tool calls" in result


def test_odd_input_from_the_script_is_handled_call_by_call(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "caf\udce9.txt").write_text("odd name\n")  # not UTF-8 on disk
    code = textwrap.dedent(
        """
        import os
        for name in sorted(os.listdir(".")):
            print(repr(name), read_file(name)[-12:].strip())
        try:
            write_file(path="x.txt", content=b"bytes")
        except TypeError as error:
            print("TypeError:", error)
        import sys
        sys.stdout.flush()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the script hides its own stdout
        sys.stderr.write("still answered: " + read_file("a.txt"))
        """
    )
    result = execute(context_in(tmp_path), code)
    assert "odd name" in result and "alpha" in result
    assert "TypeError: tool arguments are JSON values" in result and "decode it" in result
    assert not (tmp_path / "x.txt").exists()


def test_a_section_that_is_not_a_mapping_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="code: must be a section of settings"):
        settings_from({"code": True})


def test_no_tools_configured_means_none_described():
    from hermes_plugin_toolset_code.description import description

    tools = {spec.name: spec for spec in sibling_tools()}
    text = description("base", tools, {"code": {"tools": []}})
    assert "No tool functions are available" in text
    assert "read_file(path" in description("base", tools, {})


def test_doctor_names_what_stops_execute_code(tmp_path, monkeypatch):
    from hermes_plugin_toolset_code.health import findings

    from hermes_sdk import HealthContext

    isolated = {"plugins": {"isolated": ["toolset-code"]}}
    found = list(findings(HealthContext(home=str(tmp_path), config=isolated)))
    assert any("cannot run isolated" in f.message for f in found)
    monkeypatch.setenv("HERMES_WRITE_SAFE_ROOT", str(tmp_path))
    found = list(findings(HealthContext(home=str(tmp_path), config={})))
    assert any(f.level == "warning" and "HERMES_WRITE_SAFE_ROOT" in f.message for f in found)
