"""The default context engine against the SDK's conformance suite, and what it asks for."""

from __future__ import annotations

import asyncio
from pathlib import Path

import hermes_plugin_context_summary
from hermes_plugin_context_summary.engine import SummaryEngine

from hermes_sdk.context import CompactionRequest, ContextEngineContext
from hermes_sdk.models import ChatMessage
from hermes_testkit import ContextEngineTests, StandInModel


class TestSummaryEngine(ContextEngineTests):
    plugin = hermes_plugin_context_summary
    pyproject = Path(__file__).parents[1] / "pyproject.toml"


def test_it_asks_for_the_sections_a_later_compaction_folds_in(tmp_path: Path) -> None:
    model = StandInModel(reply="## Goal\nShip it.")
    request = CompactionRequest(
        session_id="s",
        reason="manual",
        head=[ChatMessage("user", "ship the release"), ChatMessage("assistant", "on it")],
        tail=[],
        previous_summary=None,
        focus="the release checklist",
        summary_tokens=500,
        input_tokens=4000,
        read_only_tools=frozenset(),
        summarize=model,
        count_tokens=lambda text: len(text) // 4,
    )
    compaction = asyncio.run(
        SummaryEngine(ContextEngineContext(home=str(tmp_path))).compact(request)
    )
    assert compaction.summary == "## Goal\nShip it." and compaction.by_model
    ((instructions, text, max_tokens),) = model.asked
    for section in ("## Goal", "## Requests and decisions", "## Work done", "## Open tasks"):
        assert section in instructions
    assert "keep above all: the release checklist" in instructions
    assert "[user]\nship the release" in text and max_tokens == 500
