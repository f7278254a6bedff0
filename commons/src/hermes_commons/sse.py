"""Server-sent events from a stream of lines: what both streaming model APIs use.

A lean decoder for the subset model servers send (``event:``, ``data:``, comments, blank
lines ending an event). It is fed line by line from the caller's own loop, so a provider
pays for no extra async generator per streamed token::

    decoder = SSEDecoder()
    async for line in response.aiter_lines():
        event = decoder.feed(line)
        if event is not None:
            name, data = event
"""

from __future__ import annotations

__all__ = ["SSEDecoder", "is_event_stream"]


def is_event_stream(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "text/event-stream"


class SSEDecoder:
    """Turns lines into (event name, data) pairs; the name is "message" when none is given.
    Several ``data:`` lines of one event are joined with newlines, as the SSE spec says."""

    __slots__ = ("_data", "_name")

    def __init__(self) -> None:
        self._name = ""
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str, str] | None:
        if not line:
            if not self._data:
                return None
            event = (self._name or "message", "\n".join(self._data))
            self._name, self._data = "", []
            return event
        if line.startswith("data:"):
            value = line[5:]
            self._data.append(value[1:] if value.startswith(" ") else value)
        elif line.startswith("event:"):
            self._name = line[6:].strip()
        # comments (":"), "id:" and "retry:" lines carry nothing a model client needs
        return None
