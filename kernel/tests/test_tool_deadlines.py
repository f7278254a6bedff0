"""The tool runner's guards: a deadline per call, and handlers that try to end the process."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.tools import ToolRunner
from hermes_kernel.store.messages import Disposition
from hermes_sdk import ToolSpec
from hermes_sdk.models import ToolCallRequest

RELEASE = threading.Event()


def run(spec: ToolSpec, tmp_path, timeout: float = 300.0):
    runner = ToolRunner({spec.name: spec}, tmp_path, timeout=timeout)
    call = ToolCallRequest(id="c1", name=spec.name, arguments="{}")
    return asyncio.run(runner.run_one(call, TurnControl()))


def test_a_call_past_the_default_deadline_is_abandoned_with_its_effect_unknown(tmp_path):
    spec = ToolSpec(name="stuck", handler=lambda: RELEASE.wait(30))
    started = time.perf_counter()
    try:
        outcome = run(spec, tmp_path, timeout=0.2)
    finally:
        RELEASE.set()
    assert outcome.disposition is Disposition.UNKNOWN
    assert outcome.content.startswith("timed out after 0.2 s and was abandoned")
    assert time.perf_counter() - started < 5


def test_a_tools_own_deadline_wins_over_the_default(tmp_path):
    spec = ToolSpec(name="napper", handler=lambda: time.sleep(0.5) or "woke", timeout_seconds=5)
    assert run(spec, tmp_path, timeout=0.1).content == "woke"
    quick = ToolSpec(name="impatient", handler=lambda: time.sleep(2), timeout_seconds=0.1)
    assert run(quick, tmp_path).disposition is Disposition.UNKNOWN


def test_sys_exit_and_keyboard_interrupt_are_one_failed_call(tmp_path):
    def exits() -> None:
        sys.exit(3)

    async def exits_async() -> None:
        sys.exit(4)

    def interrupted() -> None:
        raise KeyboardInterrupt

    for name, handler, text in [
        ("exits", exits, "error: SystemExit: 3"),
        ("exits_async", exits_async, "error: SystemExit: 4"),
        ("interrupted", interrupted, "error: KeyboardInterrupt: "),
    ]:
        outcome = run(ToolSpec(name=name, handler=handler), tmp_path)
        assert outcome.disposition is Disposition.ERROR, name
        assert outcome.content.strip() == text.strip(), name


def test_a_timeout_of_zero_is_refused_where_the_tool_is_declared():
    import pytest

    with pytest.raises(ValueError, match="timeout_seconds must be over 0"):
        ToolSpec(name="never", handler=len, timeout_seconds=0)
