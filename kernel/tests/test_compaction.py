"""The parts of compaction that decide without a model: where the kept tail begins, when a
compaction fires, what the window is, and the summary written without a model."""

from __future__ import annotations

import json

import pytest

from hermes_kernel.engine.compaction import CompressionSettings, side_effects, split_point
from hermes_kernel.engine.window import configured_window, estimate_tokens
from hermes_sdk.context import plain_summary, transcript_text
from hermes_sdk.models import ChatMessage, ToolCallRequest


def user(text: str) -> ChatMessage:
    return ChatMessage("user", text)


def reply(text: str) -> ChatMessage:
    return ChatMessage("assistant", text)


def call(call_id: str, name: str, **arguments: str) -> ChatMessage:
    return ChatMessage(
        "assistant", "", tool_calls=(ToolCallRequest(call_id, name, json.dumps(arguments)),)
    )


def result(call_id: str, name: str, text: str) -> ChatMessage:
    return ChatMessage("tool", text, tool_call_id=call_id, name=name)


def conversation(turns: int, size: int = 10) -> list[ChatMessage]:
    items: list[ChatMessage] = []
    for turn in range(turns):
        items += [user(f"question {turn} " + "x " * size), reply(f"answer {turn}")]
    return items


def test_the_tail_keeps_the_last_n_messages_when_they_fit():
    items = conversation(20)
    start = split_point(items, protect_last_n=6, keep_recent_tokens=0, tail_budget=10_000)
    assert len(items) - start == 6 and items[start].role == "user"


def test_the_tail_shrinks_to_its_budget_but_keeps_the_latest_round():
    items = conversation(10, size=2000)  # every question about 1000 tokens
    start = split_point(items, protect_last_n=20, keep_recent_tokens=0, tail_budget=1500)
    assert items[start:] == items[-3:]  # the last question, not the one before (too big)
    items.append(user("and now?"))
    start = split_point(items, protect_last_n=20, keep_recent_tokens=0, tail_budget=0)
    assert items[start:] == items[-1:]  # the latest message is kept whatever the budget


@pytest.mark.parametrize("budget", [0, 60, 10_000])
def test_a_tool_call_and_its_results_are_never_split(budget):
    items = [
        user("do three things"),
        ChatMessage(
            "assistant",
            "",
            tool_calls=(
                ToolCallRequest("c1", "write", "{}"),
                ToolCallRequest("c2", "write", "{}"),
            ),
        ),
        result("c1", "write", "wrote one " * 10),
        result("c2", "write", "wrote two " * 10),
        call("c3", "write"),
        result("c3", "write", "wrote three " * 10),
    ]
    for protect in range(1, 8):
        start = split_point(items, protect, 0, budget)
        assert items[start].role != "tool"
        assert start in (0, 1, 4)


def test_keep_recent_tokens_keeps_more_than_protect_last_n_asks():
    items = conversation(30)
    few = split_point(items, protect_last_n=2, keep_recent_tokens=0, tail_budget=10_000)
    more = split_point(items, protect_last_n=2, keep_recent_tokens=200, tail_budget=10_000)
    assert more < few


def test_the_threshold_is_raised_for_windows_under_512k():
    settings = CompressionSettings(threshold=0.5)
    assert settings.trigger_and_reason(200_000, unattended=False)[0] == 0.75
    assert settings.trigger_and_reason(1_000_000, unattended=False)[0] == 0.5
    high = CompressionSettings(threshold=0.95)
    assert high.trigger_and_reason(200_000, unattended=False)[0] == 0.95
    assert high.trigger_and_reason(200_000, unattended=True)[0] == 0.85  # the unattended safety net
    off = CompressionSettings(enabled=False)
    assert off.trigger_and_reason(200_000, unattended=False)[0] is None
    assert off.trigger_and_reason(200_000, unattended=True)[0] == 0.85
    assert (
        CompressionSettings(enabled=False, unattended_threshold=0).trigger_and_reason(9, True)[0]
        is None
    )
    assert high.trigger_and_reason(200_000, unattended=True) == (0.85, "unattended")
    assert settings.trigger_and_reason(200_000, unattended=True) == (0.75, "threshold")


def test_the_window_is_the_endpoints_then_the_models_in_config():
    raw = {"model": {"context_length": 6000}, "providers": {"big": {"context_length": 9000}}}
    assert configured_window(raw, "big") == 9000
    assert configured_window(raw, "local-endpoint") == 6000
    assert configured_window({}, "x") is None


def test_cjk_counts_about_one_token_a_character():
    assert estimate_tokens("日本語のテキスト" * 50) >= 350
    assert 200 <= estimate_tokens("plain english words " * 50) <= 300


def test_side_effects_list_every_call_that_may_have_changed_something():
    head = [
        user("tidy up"),
        call("c1", "terminal", command="rm -rf build"),
        result("c1", "terminal", "removed 12 files"),
        call("c2", "read_file", path="a.txt"),
        result("c2", "read_file", "contents"),
    ]
    actions = side_effects(head, read_only=lambda name: name == "read_file")
    assert [(a.tool, a.output) for a in actions] == [("terminal", "removed 12 files")]
    assert "rm -rf build" in actions[0].arguments


def test_the_plain_summary_has_requests_decisions_files_tasks_and_tool_heads():
    head = [
        user("Please fix the login bug in app/login.py"),
        call("c1", "write_file", path="app/login.py", content="..."),
        result("c1", "write_file", "wrote 40 lines"),
        result("c9", "todo", "[x] reproduce\n[ ] add a test\n[>] fix the bug"),
        reply("Decided to keep the session cookie; the fix is in."),
    ]
    text = plain_summary(head, read_only_tools=frozenset(), budget_chars=4000, focus="login")
    assert "fix the login bug" in text
    assert "Decided to keep the session cookie" in text
    assert "app/login.py" in text
    tasks = text.split("Open tasks:\n")[1].split("\n", 2)[:2]
    assert tasks == ["- [ ] add a test", "- [>] fix the bug"]  # the latest list, open items
    assert "wrote 40 lines" in text and "[changed things]" in text
    assert "Focus asked for: login" in text


def test_the_plain_summary_stays_within_its_budget_and_counts_what_it_left_out():
    head = conversation(500, size=50)
    text = plain_summary(head, budget_chars=2000)
    assert len(text) <= 2100
    assert "earlier left out" in text
    assert "question 499" in text  # the newest survive


def test_the_summarizer_gets_the_start_and_the_end_when_the_head_is_too_long():
    head = conversation(400, size=50)
    text = transcript_text(head, budget_chars=5000)
    assert len(text) <= 5200
    assert "question 0 " in text and "question 399 " in text
    assert "messages from the middle left out" in text


def test_the_list_of_actions_keeps_the_newest_that_fit():
    from hermes_kernel.engine.compaction import newest_actions
    from hermes_kernel.store.compactions import Action

    actions = [Action("terminal", f'{{"command": "step {n}"}}', "ok " * 30) for n in range(100)]
    kept, left_out = newest_actions(actions, 2000)
    assert kept[-1] == actions[-1] and left_out == 100 - len(kept) and 0 < len(kept) < 100
    assert sum(len(a.tool) + len(a.arguments) + len(a.output) + 8 for a in kept) <= 2100
    one, none_left = newest_actions(actions[:1], 10)  # the newest is kept whatever its size
    assert one == (actions[0],) and none_left == 0
