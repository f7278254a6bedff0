"""OutputCollector hands each piece of a command's stdout on as soon as it arrives, and
still hides the cwd trailer, however the trailer is split."""

from __future__ import annotations

import time

from hermes_sdk.terminal import OutputCollector

MARKER = "\x1e__hermes_cwd_0123456789ab__:"


def collect(chunks: list[str]) -> tuple[list[str], str, str | None]:
    seen: list[str] = []
    collector = OutputCollector(MARKER, seen.append)
    for chunk in chunks:
        collector.stdout(chunk.encode())
    result, cwd = collector.result(0, time.perf_counter())
    return seen, result.stdout, cwd


def test_a_short_line_is_handed_on_at_once():
    seen: list[str] = []
    collector = OutputCollector(MARKER, seen.append)
    collector.stdout(b"call 1\n")
    assert seen == ["call 1\n"]


def test_the_trailer_is_hidden_wherever_it_is_split():
    stream = "line one\nline \x1e two\n" + MARKER + "/work/dir"
    for size in (1, 2, 5, 13, len(stream)):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        seen, stdout, cwd = collect(chunks)
        assert stdout == "line one\nline \x1e two\n", size
        assert "".join(seen) == stdout, size
        assert cwd == "/work/dir", size
