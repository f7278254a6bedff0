"""The host's transforms of a command's output (``hermes_transform_terminal_output``): they
chain in plugin order, and one that raises, hangs or answers anything but text is skipped,
the text staying as the last good one left it."""

from __future__ import annotations

from typing import Any

from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy

TRANSFORM = """
import time
from hermes_sdk import hookimpl

@hookimpl{marker}
def hermes_transform_terminal_output(command, output):
    {body}
"""


def test_output_transforms_chain_and_a_failing_one_is_skipped(make_plugin: Any) -> None:
    bodies = [
        ("(tryfirst=True)", "return output.upper()"),
        ("", "raise RuntimeError('filter bug')"),
        ("", "time.sleep(2)"),
        ("", "return 42"),
        ("(trylast=True)", "return f'[{command}] ' + output"),
    ]
    records = [
        make_plugin(
            f"filter-{n}",
            TRANSFORM.format(marker=marker, body=body),
            declares=["hook.hermes_transform_terminal_output"],
        )
        for n, (marker, body) in enumerate(bodies)
    ]
    host = PluginHost(records, PluginPolicy(), hook_timeout=0.3)
    host.load_observers()
    assert host.transform_terminal_output("ls", "a\nb") == "[ls] A\nB"


def test_a_stop_cuts_the_wait_for_a_hanging_transform(make_plugin: Any) -> None:
    """From a worker thread too, a stop (hermes leaving) ends the wait within
    STOPPING_SECONDS, not the full deadline."""
    import threading
    import time

    hanging = make_plugin(
        "slow-filter",
        TRANSFORM.format(marker="", body="time.sleep(10)"),
        declares=["hook.hermes_transform_terminal_output"],
    )
    host = PluginHost([hanging], PluginPolicy(), hook_timeout=30)
    host.load_observers()
    threading.Timer(0.2, host.hooks.stop).start()
    started = time.monotonic()
    assert host.transform_terminal_output("ls", "a") == "a"
    assert time.monotonic() - started < 3
