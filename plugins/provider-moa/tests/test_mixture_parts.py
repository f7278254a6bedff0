"""The mixture's parts on their own: its settings refused in one line, the advisers' view of
a conversation, and the note the aggregator gets."""

from __future__ import annotations

import pytest
from hermes_plugin_provider_moa.mixture import (
    ADVISOR_PROMPT,
    FOLLOW_ON,
    RESULT_CHARS,
    advisory_view,
    with_advice,
)
from hermes_plugin_provider_moa.settings import mixture_settings

from hermes_sdk.models import ChatMessage, ToolCallRequest


def test_names_are_slots_and_mistakes_are_one_line():
    settings = mixture_settings(
        {"reference_models": ["a", {"provider": "b", "model": "m"}], "aggregator": "c"}
    )
    assert [slot.label for slot in settings.reference_models] == ["a", "b (m)"]
    assert settings.fanout == "per_call"
    with pytest.raises(ValueError, match=r"^aggregatr: unknown key \(did you mean aggregator\?\)"):
        mixture_settings({"reference_models": ["a"], "aggregatr": "c"})
    with pytest.raises(ValueError, match=r"^aggregator: Field required"):
        mixture_settings({"reference_models": ["a"]})
    with pytest.raises(ValueError, match="reference_models: List should have at least 1 item"):
        mixture_settings({"reference_models": [], "aggregator": "c"})


def test_advisers_see_the_conversation_as_text_without_tools_or_the_system_prompt():
    long = "x" * (RESULT_CHARS * 2)
    view = advisory_view(
        [
            ChatMessage("system", "the agent's own prompt"),
            ChatMessage("user", "read the log"),
            ChatMessage(
                "assistant", "", tool_calls=(ToolCallRequest("1", "read_file", '{"path": "a"}'),)
            ),
            ChatMessage("tool", long, tool_call_id="1", name="read_file"),
        ]
    )
    assert view[0] == ChatMessage("system", ADVISOR_PROMPT)
    assert [m.role for m in view] == ["system", "user", "assistant", "user"]
    assert '[called read_file({"path": "a"})]' in view[2].content
    assert "[result of read_file:" in view[2].content and "characters left out" in view[2].content
    assert len(view[2].content) < RESULT_CHARS + 200
    assert view[-1].content == FOLLOW_ON
    assert not any(m.tool_calls for m in view)


def test_the_note_follows_the_users_words_or_stands_alone():
    joined = with_advice([ChatMessage("user", "what now?")], "NOTE")
    assert joined == [ChatMessage("user", "what now?\n\nNOTE")]
    after_tool = with_advice([ChatMessage("tool", "out", tool_call_id="1")], "NOTE")
    assert after_tool[-1] == ChatMessage("user", "NOTE")
