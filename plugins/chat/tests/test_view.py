"""What the chat prints of an interrupted reply: kept text is said to be kept, and a reply
stopped before it wrote anything does not claim to keep text."""

from __future__ import annotations

import pytest
from hermes_plugin_chat.view import ChatView


@pytest.fixture
def printed() -> ChatView:
    return ChatView()


def test_an_interrupted_reply_says_what_was_kept(
    printed: ChatView, capsys: pytest.CaptureFixture[str]
) -> None:
    printed.reply("Half of an answer", interrupted=True)
    assert "(interrupted; the text so far is kept)" in capsys.readouterr().out
    printed.reply("", interrupted=True)
    out = capsys.readouterr().out
    assert "(interrupted; nothing was written yet)" in out and "kept" not in out
