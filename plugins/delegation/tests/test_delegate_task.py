"""delegate_task where it cannot run: bad input and missing pieces are one result line."""

from __future__ import annotations

import asyncio

from hermes_plugin_delegation.delegate import delegate_task

from hermes_sdk.tooling import ToolContext


def context(tmp_path, config=None) -> ToolContext:
    return ToolContext(session_id="s", home=str(tmp_path), cwd=str(tmp_path), config=config or {})


def test_without_a_runtime_it_says_so(tmp_path):
    said = asyncio.run(delegate_task([{"goal": "x"}], context(tmp_path)))
    assert said == "error: this run cannot start agents of its own"


def test_a_task_needs_a_goal(tmp_path):
    said = asyncio.run(delegate_task([{"goal": "  "}], context(tmp_path)))
    assert said == "error: every task needs a goal"


def test_a_bad_section_is_named(tmp_path):
    bad = context(tmp_path, {"delegation": {"max_depth": 0}})
    said = asyncio.run(delegate_task([{"goal": "x"}], bad))
    assert said.startswith("error: config.yaml: delegation.max_depth:")
