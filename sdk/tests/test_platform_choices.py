"""A question for a platform without buttons: its choices in bold where Markdown shows, as
they are where it does not (IRC, WeCom's and QQ's plain text)."""

from __future__ import annotations

from hermes_sdk.platform import ChatRef, Choice, TypedAnswers, choices_prompt

CHOICES = [Choice("once", "Allow once"), Choice("deny", "Deny")]


def test_bold_for_markdown_plain_for_text() -> None:
    assert choices_prompt("Run it?", CHOICES).endswith("Reply with one of: **once**, **deny**")
    plain = choices_prompt("Run it?", CHOICES, markdown=False)
    assert plain == "Run it?\n\nReply with one of: once, deny"


def test_a_plain_prompt_is_remembered_as_asked() -> None:
    typed = TypedAnswers()
    chat = ChatRef("irc", "#ops", "group")
    assert "**" not in typed.prompt(chat, "Run it?", CHOICES, "q1", markdown=False)
    press = typed.press_for(chat, "ann", "deny")
    assert press is not None and (press.request_id, press.choice) == ("q1", "deny")
