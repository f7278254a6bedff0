"""The script's stdout as it arrives: call frames taken out, the rest kept up to a cap."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["FrameReader", "KeptOutput"]

_MESSAGE = re.compile(r"folder=/[^\x00]*|[0-9]{1,9}-[0-9]{1,9}")
"""What a frame may carry: the run's folder, or a call's ID (PID-N)."""


class KeptOutput:
    """The first ``limit`` characters of the script's output; the rest is only counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.cut = 0

    def add(self, text: str) -> None:
        room = self.limit - self.size
        if room > 0:
            kept = text[:room]
            self.parts.append(kept)
            self.size += len(kept)
            text = text[len(kept) :]
        self.cut += len(text)

    @property
    def total(self) -> int:
        return self.size + self.cut

    def text(self) -> str:
        return "".join(self.parts)


class FrameReader:
    """Splits the stream into the script's output and its frames (``FRAME`` + a message +
    newline). A frame split across chunks is held until its end arrives; one whose message
    is not a folder or a call ID is dropped."""

    def __init__(self, frame: str, on_call: Callable[[str], None], output: KeptOutput) -> None:
        self.frame = frame
        self.on_call = on_call
        self.output = output
        self._pending = ""

    def feed(self, text: str) -> None:
        self._pending += text
        while True:
            at = self._pending.find(self.frame)
            if at < 0:
                break
            end = self._pending.find("\n", at)
            if end < 0:  # the frame's end has not arrived yet
                self._emit(self._pending[:at])
                self._pending = self._pending[at:]
                return
            self._emit(self._pending[:at])
            message = self._pending[at + len(self.frame) : end]
            self._pending = self._pending[end + 1 :]
            if _MESSAGE.fullmatch(message):
                self.on_call(message)
        keep = self._frame_start()
        self._emit(self._pending[:keep])
        self._pending = self._pending[keep:]

    def _frame_start(self) -> int:
        """Where a frame may be starting at the end of what is pending."""
        at = self._pending.rfind(self.frame[0])
        if at >= 0 and self.frame.startswith(self._pending[at:]):
            return at
        return len(self._pending)

    def finish(self) -> None:
        self._emit(self._pending)
        self._pending = ""

    def _emit(self, text: str) -> None:
        if text:
            self.output.add(text)
