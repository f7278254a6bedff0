"""Loading one plugin under a deadline: every way it can break leaves nothing registered."""

from __future__ import annotations

import re

import pytest

from hermes_kernel.plugins.loader import import_target, load_plugin
from hermes_sdk import new_plugin_manager

GOOD = """
from hermes_sdk import ToolSpec, hookimpl

@hookimpl
def hermes_tools():
    yield ToolSpec(name="echo", handler=lambda text: text)
"""


def test_a_good_plugin_loads_and_yields_its_specs(make_plugin):
    manager = new_plugin_manager()
    outcome = load_plugin(make_plugin("good", GOOD), manager, timeout=5)
    assert outcome.ok, outcome.error
    assert [spec.name for spec in outcome.specs] == ["echo"]
    assert manager.get_plugin("good") is not None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "raise RuntimeError('kaboom')",
            r"RuntimeError: kaboom \(at hermes_test_plugin_bad_\w+\.py:1\)",
        ),
        ("import sys\nsys.exit(3)", r"called sys.exit\(3\) while loading"),
        ("raise SystemExit", r"called sys.exit\(None\)"),
        (
            "import no_such_module_anywhere",
            r"ModuleNotFoundError: No module named 'no_such_module_anywhere'",
        ),
        (
            "from hermes_sdk import hookimpl\n@hookimpl\ndef hermes_provders():\n    return []",
            r"'hermes_provders' matches no hook spec \(did you mean 'hermes_providers'\?\)",
        ),
        (
            "from hermes_sdk import hookimpl\n@hookimpl\ndef hermes_pre_tool_call(call, extra):\n    pass",
            r"invalid hookimpl: .*extra",
        ),
        (
            "from hermes_sdk import hookimpl\n@hookimpl\ndef hermes_tools():\n    raise KeyError('x')\n    yield",
            r"KeyError: 'x'",
        ),
        (
            "from hermes_sdk import ToolSpec, hookimpl\n@hookimpl\ndef hermes_tools():\n"
            "    yield ToolSpec(name='bad name', handler=len)",
            r"ValueError: invalid tool name 'bad name'",
        ),
    ],
)
def test_each_failure_is_one_line_and_leaves_nothing_registered(make_plugin, source, expected):
    manager = new_plugin_manager()
    outcome = load_plugin(make_plugin("bad", source), manager, timeout=5)
    assert not outcome.ok
    assert outcome.error is not None and "\n" not in outcome.error
    assert re.search(expected, outcome.error), outcome.error
    assert manager.get_plugin("bad") is None
    assert all(not caller.get_hookimpls() for caller in vars(manager.hook).values())


def test_a_hang_past_the_deadline_is_abandoned_and_unregistered(make_plugin):
    manager = new_plugin_manager()
    record = make_plugin(
        "hangs",
        """
        import threading
        from hermes_sdk import ToolSpec, hookimpl

        release = threading.Event()

        @hookimpl
        def hermes_tools():
            release.wait(30)  # hangs inside the registration hook, after registering
            yield ToolSpec(name="late", handler=len)
        """,
    )
    outcome = load_plugin(record, manager, timeout=0.3)
    assert not outcome.ok
    assert "did not finish loading within 0.3 s (plugins.load_timeout_seconds)" in outcome.error
    assert manager.get_plugin("hangs") is None
    assert outcome.error.endswith("it hangs in a registration hook")


def test_a_plugin_that_finishes_after_its_deadline_leaves_nothing_behind(make_plugin):
    """The abandoned thread completes its import and registration later, in private."""
    manager = new_plugin_manager()
    record = make_plugin(
        "late",
        """
        import time
        from hermes_sdk import hookimpl

        time.sleep(0.5)

        @hookimpl
        def hermes_pre_tool_call(call):
            raise AssertionError("a failed plugin's hook must never be called")
        """,
    )
    outcome = load_plugin(record, manager, timeout=0.1)
    assert outcome.error.endswith("it hangs at import")
    import sys
    import time

    deadline = time.monotonic() + 5
    while record.target not in sys.modules or not hasattr(
        sys.modules[record.target], "hermes_pre_tool_call"
    ):
        assert time.monotonic() < deadline, "the abandoned import never finished"
        time.sleep(0.05)
    time.sleep(0.1)  # the thread registers with its private manager right after the import
    assert manager.get_plugins() == set()
    assert manager.hook.hermes_pre_tool_call.get_hookimpls() == []


def test_one_module_registered_under_two_names_fails_clearly(make_plugin):
    from dataclasses import replace

    manager = new_plugin_manager()
    first = make_plugin("first", "")
    second = replace(first, name="second")
    assert load_plugin(first, manager, timeout=5).ok
    outcome = load_plugin(second, manager, timeout=5)
    assert outcome.error == f"{first.target} is already registered as plugin 'first'"


def test_metadata_problems_fail_without_importing(make_plugin):
    from dataclasses import replace

    record = replace(
        make_plugin("dup", "raise AssertionError('imported')"), problems=("name taken",)
    )
    outcome = load_plugin(record, new_plugin_manager(), timeout=5)
    assert (outcome.ok, outcome.error) == (False, "name taken")


def test_import_target_resolves_attributes(make_plugin):
    record = make_plugin("obj", "class Holder:\n    class Inner:\n        value = 7\n")
    assert import_target(f"{record.target}:Holder.Inner").value == 7


def test_a_hookimpl_that_names_its_hook_is_loaded(make_plugin):
    """pluggy's ``specname``: the function's own name differs from the hook's."""
    record = make_plugin(
        "named",
        "from hermes_sdk import hookimpl, ToolSpec\n"
        "@hookimpl(specname='hermes_tools')\n"
        "def my_tools():\n"
        "    yield ToolSpec(name='named_echo', handler=lambda text='': text, description='x')\n",
    )
    manager = new_plugin_manager()
    outcome = load_plugin(record, manager, timeout=5)
    assert outcome.ok, outcome.error
    assert [spec.name for spec in outcome.specs] == ["named_echo"]


def test_a_package_in_our_group_shaped_like_another_agents_plugin_is_skipped(make_plugin):
    from hermes_kernel.plugins.loader import NOT_A_HERMES_PLUGIN

    record = make_plugin(
        "stray", "def register(ctx):\n    ctx.register_hook('pre_tool_call', print)\n"
    )
    outcome = load_plugin(record, new_plugin_manager(), timeout=5)
    assert not outcome.ok and outcome.error == NOT_A_HERMES_PLUGIN
    assert "\n" not in NOT_A_HERMES_PLUGIN
    empty = make_plugin("empty", "")
    assert load_plugin(empty, new_plugin_manager(), timeout=5).ok  # nothing at all is harmless
