"""The SSE decoder providers share: the subset of server-sent events model APIs send."""

from __future__ import annotations

from hermes_commons.sse import SSEDecoder, is_event_stream


def decode(text: str) -> list[tuple[str, str]]:
    decoder = SSEDecoder()
    events = [decoder.feed(line) for line in text.split("\n")]
    return [event for event in events if event is not None]


def test_named_and_unnamed_events() -> None:
    stream = 'event: message_start\ndata: {"a": 1}\n\ndata: {"b": 2}\n\n'
    assert decode(stream) == [("message_start", '{"a": 1}'), ("message", '{"b": 2}')]


def test_multi_line_data_comments_and_ids() -> None:
    stream = ": keep-alive\nid: 7\nretry: 100\ndata: first\ndata:second\n\n\n"
    assert decode(stream) == [("message", "first\nsecond")]


def test_an_event_without_its_blank_line_is_not_dispatched() -> None:
    assert decode('data: {"partial"') == []


def test_content_types() -> None:
    assert is_event_stream("text/event-stream; charset=utf-8")
    assert not is_event_stream("application/json")
    assert not is_event_stream(None)
