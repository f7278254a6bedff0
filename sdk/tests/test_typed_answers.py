"""Typed answers as button presses, for platforms without buttons: a choice's own value
before its number, and a question forgotten once the gateway's wait for it is long over."""

from __future__ import annotations

import time

from hermes_sdk.platform import ChatRef, Choice, TypedAnswers

CHAT = ChatRef(platform="sms", chat_id="+15551234567", chat_type="private")


def test_a_choices_value_is_matched_before_a_number() -> None:
    answers = TypedAnswers()
    answers.asked(CHAT, [Choice(str(n), f"Option {n}") for n in range(12)], "q")
    press = answers.press_for(CHAT, "+15551234567", "7")
    assert press is not None and press.choice == "7"  # not the seventh, which is "6"
    press = answers.press_for(CHAT, "+15551234567", "option 3")
    assert press is not None and press.choice == "3"


def test_a_question_no_longer_open_takes_no_later_message() -> None:
    answers = TypedAnswers()
    answers.asked(CHAT, [Choice("yes", "Yes"), Choice("deny", "Deny")], "q")
    assert answers.press_for(CHAT, "+15551234567", "deny", lambda _q: True) is not None
    # Timed out (or stopped) at the gateway: "deny" is now a message, and stays one.
    assert answers.press_for(CHAT, "+15551234567", "deny", lambda _q: False) is None
    assert answers.press_for(CHAT, "+15551234567", "deny") is None


def test_a_question_long_past_takes_no_later_message(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    answers = TypedAnswers(ttl_seconds=60)
    answers.asked(CHAT, [Choice("yes", "Yes"), Choice("no", "No")], "q")
    assert answers.press_for(CHAT, "+15551234567", "no") is not None
    later = time.monotonic() + 61
    monkeypatch.setattr(time, "monotonic", lambda: later)
    assert answers.press_for(CHAT, "+15551234567", "no") is None  # a message, not an answer
