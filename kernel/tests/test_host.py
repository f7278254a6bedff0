"""The plugin host: lazy loading from manifests, strict mode, and guarded observers."""

from __future__ import annotations

import asyncio
import io
import threading
import time
from dataclasses import replace

import pytest

from hermes_kernel.plugins.host import PluginHost, PluginLoadError
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_kernel.plugins.trace import stderr_tracer
from hermes_sdk import Kind, SessionInfo, ToolCall, ToolResult
from hermes_sdk.hookspecs import LIFECYCLE_HOOKS

TOOL = """
from hermes_sdk import ToolSpec, hookimpl

@hookimpl
def hermes_tools():
    yield ToolSpec(name="{name}", handler=len)
"""
EXPLODES_IF_IMPORTED = "raise AssertionError('this plugin must not be imported')"


def host_of(*records, **options) -> PluginHost:
    return PluginHost(list(records), PluginPolicy(), **options)


def test_require_imports_only_the_declaring_plugin(make_plugin):
    host = host_of(
        make_plugin("a", TOOL.format(name="alpha"), declares=["tool.alpha"]),
        make_plugin("b", EXPLODES_IF_IMPORTED, declares=["tool.beta"]),
    )
    provided = host.require(Kind.TOOL, "alpha")
    assert provided is not None and provided.plugin == "a"
    assert set(host.outcomes) == {"a"}
    assert host.require(Kind.TOOL, "missing") is None
    assert set(host.outcomes) == {"a"}, "a name nobody declares imports nothing"


def test_plugins_without_manifest_are_imported_for_any_lookup(make_plugin):
    host = host_of(
        make_plugin("broken", "raise RuntimeError('x')"),
        make_plugin("legacy", TOOL.format(name="old")),
    )
    provided = host.require(Kind.TOOL, "old")
    assert provided is not None and provided.plugin == "legacy"
    assert host.outcomes["broken"].ok is False


def test_duplicate_names_fail_the_later_plugin_and_name_both(make_plugin):
    host = host_of(
        make_plugin("first", TOOL.format(name="echo"), declares=["tool.echo"]),
        make_plugin("second", TOOL.format(name="echo"), declares=["tool.echo"]),
    )
    outcomes = {o.name: o for o in host.load_all()}
    assert outcomes["first"].ok
    assert outcomes["second"].error == (
        "provides tool 'echo', already provided by plugin 'first'; disable one of the two"
    )
    assert host.manager.get_plugin("second") is None
    assert [p.plugin for p in host.index.of_kind(Kind.TOOL)] == ["first"]


def test_reserved_names_are_refused(make_plugin):
    source = """
from pydantic import BaseModel
from hermes_sdk import CommandSpec, ConfigSectionSpec, hookimpl

class M(BaseModel):
    pass

@hookimpl
def hermes_{hook}():
    yield {spec}
"""
    host = host_of(
        make_plugin(
            "cfg",
            source.format(
                hook="config_sections", spec="ConfigSectionSpec(name='plugins', model=M)"
            ),
        ),
        make_plugin(
            "cmd", source.format(hook="cli_commands", spec="CommandSpec(name='doctor', factory=M)")
        ),
    )
    outcomes = {o.name: o for o in host.load_all()}
    assert outcomes["cfg"].error == "config section 'plugins' belongs to the kernel"
    assert outcomes["cmd"].error == "command 'doctor' is a built-in hermes command"


def test_manifest_mismatches_warn_and_fail_in_strict_mode(make_plugin):
    record = make_plugin("liar", TOOL.format(name="real"), declares=["tool.claimed"])
    outcome = host_of(record).load("liar")
    assert outcome.ok
    assert outcome.warnings == [
        "provides tool 'real' but does not declare it; add 'tool.real' to its hermes.provides entry points",
        "declares tool 'claimed' but does not provide it",
    ]
    with pytest.raises(PluginLoadError, match=r"plugin 'liar' .* does not declare it"):
        host_of(record, strict=True).load("liar")


COMMAND = """
from hermes_sdk import CommandSpec, hookimpl

@hookimpl
def hermes_cli_commands():
    yield CommandSpec(name="go", description="Go somewhere.", factory=lambda: None)
"""


def test_a_help_file_that_disagrees_with_the_command_warns_and_fails_in_strict_mode(make_plugin):
    record = replace(
        make_plugin("stale", COMMAND, declares=["command.go"]),
        help=(("command.go", "Go elsewhere."), ("command.gone", "Removed.")),
    )
    outcome = host_of(record).load("stale")
    assert outcome.ok
    assert outcome.warnings == [
        "hermes-help.toml does not describe command 'go' as its spec does; "
        "write: 'command.go' = 'Go somewhere.'",
        "hermes-help.toml describes command 'gone', which the plugin does not register",
    ]
    with pytest.raises(PluginLoadError, match=r"plugin 'stale' .* does not describe command"):
        host_of(record, strict=True).load("stale")
    described = replace(record, help=(("command.go", "Go somewhere."),))
    assert host_of(described, strict=True).load("stale").warnings == []
    undescribed = replace(record, help=())
    assert host_of(undescribed, strict=True).load("stale").warnings == [], "help is optional"


def test_strict_mode_turns_a_failure_into_an_error(make_plugin):
    host = host_of(make_plugin("broken", "raise RuntimeError('bad')"), strict=True)
    with pytest.raises(
        PluginLoadError,
        match=r"plugin 'broken' \(hermes-plugin-broken 1.0\) failed to load: RuntimeError: bad",
    ):
        host.load_all()


def test_disabled_plugins_are_never_imported(make_plugin):
    host = PluginHost(
        [make_plugin("off", EXPLODES_IF_IMPORTED, declares=["tool.x"])],
        PluginPolicy(config_disabled=frozenset({"off"})),
    )
    assert host.load_all() == []
    assert host.require(Kind.TOOL, "x") is None


OBSERVER = """
from hermes_sdk import hookimpl

CALLS = []

@hookimpl{marker}
def hermes_pre_tool_call(call):
    CALLS.append(("{name}", call.tool))
    {extra}

@hookimpl
def hermes_post_tool_call(call, result):
    CALLS.append(("{name}", "post", result.ok))
"""


def test_a_raising_observer_is_skipped_and_the_others_still_run(make_plugin, caplog):
    import sys

    raising = make_plugin(
        "raiser",
        OBSERVER.format(
            name="raiser", marker="(tryfirst=True)", extra="raise RuntimeError('observer bug')"
        ),
        declares=["hook.hermes_pre_tool_call", "hook.hermes_post_tool_call"],
    )
    exiting = make_plugin(
        "exiter",
        OBSERVER.format(name="exiter", marker="", extra="raise SystemExit(1)"),
        declares=["hook.hermes_pre_tool_call", "hook.hermes_post_tool_call"],
    )
    calm = make_plugin(
        "calm",
        OBSERVER.format(name="calm", marker="(trylast=True)", extra="pass"),
        declares=["hook.hermes_pre_tool_call", "hook.hermes_post_tool_call"],
    )
    host = host_of(raising, exiting, calm)
    host.load_observers()
    call = ToolCall(session_id="s", call_id="c1", tool="echo")
    asyncio.run(host.pre_tool_call(call))
    asyncio.run(host.post_tool_call(call, ToolResult(call_id="c1", ok=True, content="hi")))
    calls = {
        name: sys.modules[r.target].CALLS
        for name, r in [("raiser", raising), ("exiter", exiting), ("calm", calm)]
    }
    assert calls["calm"] == [("calm", "echo"), ("calm", "post", True)]
    assert calls["raiser"][1:] == [("raiser", "post", True)]
    messages = [r.getMessage() for r in caplog.records]
    assert any(
        "plugin 'raiser' raised in hermes_pre_tool_call: RuntimeError: observer bug" in m
        for m in messages
    )
    assert any("plugin 'exiter' raised in hermes_pre_tool_call: SystemExit" in m for m in messages)


def test_a_hanging_hook_is_abandoned_at_its_deadline_and_disabled_after_three(make_plugin, caplog):
    release = threading.Event()
    hanging = make_plugin(
        "hanger",
        OBSERVER.format(name="hanger", marker="(tryfirst=True)", extra="RELEASE.wait(30)"),
        declares=["hook.hermes_pre_tool_call", "hook.hermes_post_tool_call"],
    )
    calm = make_plugin(
        "calm",
        OBSERVER.format(name="calm", marker="", extra="pass"),
        declares=["hook.hermes_pre_tool_call", "hook.hermes_post_tool_call"],
    )
    host = host_of(hanging, calm, hook_timeout=0.2)
    host.load_observers()
    import sys

    sys.modules[hanging.target].RELEASE = release
    try:
        seconds = []
        for number in range(4):
            started = time.perf_counter()
            asyncio.run(
                host.pre_tool_call(ToolCall(session_id="s", call_id=f"c{number}", tool="t"))
            )
            seconds.append(time.perf_counter() - started)
    finally:
        release.set()
    # Three calls waited for the deadline; the fourth skipped the disabled plugin.
    assert all(0.15 < s < 2 for s in seconds[:3])
    assert len(sys.modules[hanging.target].CALLS) == 3
    assert len(sys.modules[calm.target].CALLS) == 4  # the calm plugin ran every time
    assert host.hooks.disabled == {"hanger": "its hooks missed the 0.2 s deadline 3 times"}
    live = host.hooks.implementations("hermes_pre_tool_call")
    assert [impl.plugin_name for impl in live] == ["calm"]
    messages = [r.getMessage() for r in caplog.records]
    assert sum("did not return within 0.2 s" in m for m in messages) == 3
    assert sum("'hanger' is disabled for the rest of this process" in m for m in messages) == 1


def test_the_event_loop_serves_on_while_a_hook_hangs(make_plugin):
    hanging = make_plugin(
        "hanger",
        OBSERVER.format(name="hanger", marker="", extra="__import__('time').sleep(0.5)"),
        declares=["hook.hermes_pre_tool_call"],
    )
    host = host_of(hanging, hook_timeout=5)
    host.load_observers()

    async def both() -> tuple[float, float]:
        started = time.perf_counter()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        await host.pre_tool_call(ToolCall(session_id="s", call_id="c", tool="t"))
        ticking.cancel()
        return time.perf_counter() - started, ticks

    seconds, ticks = asyncio.run(both())
    assert seconds >= 0.45  # the hook's own time, waited for (under the deadline)
    assert ticks >= 10  # while the loop kept running other work


def test_a_stop_ends_the_wait_for_a_hanging_hook_at_once(make_plugin):
    hanging = make_plugin(
        "hanger",
        OBSERVER.format(name="hanger", marker="", extra="__import__('time').sleep(10)"),
        declares=["hook.hermes_pre_tool_call"],
    )
    host = host_of(hanging, hook_timeout=30)
    host.load_observers()

    async def stopped_after(delay: float) -> float:
        asyncio.get_running_loop().call_later(delay, host.hooks.stop)
        started = time.perf_counter()
        await host.pre_tool_call(ToolCall(session_id="s", call_id="c", tool="t"))
        return time.perf_counter() - started

    assert asyncio.run(stopped_after(0.2)) < 2
    assert not host.hooks.disabled  # leaving is not the plugin's fault


def test_observers_fire_in_pluggy_order(make_plugin):
    import sys

    records = [
        make_plugin(name, OBSERVER.format(name=name, marker=marker, extra="pass"))
        for name, marker in [
            ("last", "(trylast=True)"),
            ("plain", ""),
            ("first", "(tryfirst=True)"),
        ]
    ]
    host = host_of(*records)
    host.load_all()
    shared: list[tuple[str, str]] = []
    for record in records:
        sys.modules[record.target].CALLS = shared  # one list records the order of calls
    asyncio.run(host.pre_tool_call(ToolCall(session_id="s", call_id="c", tool="t")))
    assert shared == [("first", "t"), ("plain", "t"), ("last", "t")]


def test_lifecycle_methods_cover_every_lifecycle_hook():
    methods = {"hermes_" + name for name in dir(PluginHost) if not name.startswith("_")}
    assert set(LIFECYCLE_HOOKS) <= methods


def test_tracing_prints_every_hook_call_with_plugin_and_duration(make_plugin):
    stream = io.StringIO()
    host = host_of(
        make_plugin(
            "t", OBSERVER.format(name="t", marker="", extra="pass") + TOOL.format(name="x")
        ),
        tracer=stderr_tracer(stream),
    )
    host.load_all()
    host.on_session_start(SessionInfo(session_id="s", source="cli"))
    asyncio.run(host.pre_tool_call(ToolCall(session_id="s", call_id="c", tool="x")))
    lines = stream.getvalue().splitlines()
    assert any(line.startswith("hermes trace: hermes_tools plugin=t ") for line in lines)
    assert any(line.startswith("hermes trace: <load> plugin=t ") for line in lines)
    assert any(
        line.startswith("hermes trace: hermes_pre_tool_call plugin=t ") and line.endswith(" ms")
        for line in lines
    )


STATUS = """
from hermes_sdk import StatusLine, hookimpl

@hookimpl
def hermes_status_lines(context):
    {body}
"""


def test_status_lines_import_only_their_declarers_and_name_a_failing_plugin(make_plugin):
    from hermes_sdk import HealthContext, StatusLine

    host = host_of(
        make_plugin(
            "jobs",
            STATUS.format(body="yield StatusLine(label='Jobs', text=context.home)"),
            declares=["hook.hermes_status_lines"],
        ),
        make_plugin(
            "broken",
            STATUS.format(body="raise RuntimeError('cannot count')"),
            declares=["hook.hermes_status_lines"],
        ),
        make_plugin(
            "wrong", STATUS.format(body="yield 'a string'"), declares=["hook.hermes_status_lines"]
        ),
        make_plugin("tools", EXPLODES_IF_IMPORTED, declares=["tool.alpha"]),
    )
    answers = dict(host.status_lines(HealthContext(home="/h")))
    assert answers == {
        "jobs": [StatusLine(label="Jobs", text="/h")],
        "broken": "RuntimeError: cannot count",
        "wrong": "hermes_status_lines must yield StatusLine objects",
    }
    assert set(host.outcomes) == {"jobs", "broken", "wrong"}, "no other plugin is imported"


def test_a_hanging_status_contribution_is_a_line_at_its_deadline(make_plugin):
    from hermes_sdk import HealthContext

    release = threading.Event()
    record = make_plugin(
        "slow",
        STATUS.format(body="import sys; sys.modules[__name__].RELEASE.wait(); yield from ()"),
        declares=["hook.hermes_status_lines"],
    )
    host = host_of(record, hook_timeout=0.2)
    host.load("slow")
    import sys

    sys.modules[record.target].RELEASE = release
    started = time.monotonic()
    try:
        assert host.status_lines(HealthContext(home="/h")) == [("slow", "no answer within 0.2 s")]
    finally:
        release.set()
    assert time.monotonic() - started < 2


def test_a_session_does_not_import_plugins_with_only_command_hooks(make_plugin):
    host = host_of(
        make_plugin(
            "status-only",
            EXPLODES_IF_IMPORTED,
            declares=["hook.hermes_status_lines", "hook.hermes_doctor_checks"],
        ),
        make_plugin(
            "observer",
            OBSERVER.format(name="observer", marker="", extra="pass"),
            declares=["hook.hermes_pre_tool_call", "hook.hermes_post_tool_call"],
        ),
    )
    host.load_observers()
    assert set(host.outcomes) == {"observer"}


def test_import_parts_come_from_declarers_and_a_failing_one_is_named(make_plugin):
    from hermes_sdk.importing import HomeImport, ImportSection

    source = """
from hermes_sdk import hookimpl
from hermes_sdk.importing import ImportSection

@hookimpl
def hermes_import_home(request):
    {body}
"""
    host = host_of(
        make_plugin(
            "notes",
            source.format(body="yield ImportSection('notes', added=[request.source_kind])"),
            declares=["hook.hermes_import_home"],
        ),
        make_plugin(
            "broken",
            source.format(body="raise OSError('disk full')"),
            declares=["hook.hermes_import_home"],
        ),
        make_plugin("tools", EXPLODES_IF_IMPORTED, declares=["tool.alpha"]),
    )
    request = HomeImport(source_kind="hermes-agent", source="/a", target="/b")
    assert dict(host.import_home(request)) == {
        "notes": [ImportSection("notes", added=["hermes-agent"])],
        "broken": "OSError: disk full",
    }
    assert "tools" not in host.outcomes
