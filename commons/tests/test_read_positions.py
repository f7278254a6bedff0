"""Read positions: only forward, the newest kept past the limit, the recently read ones
listed, and a damaged file read as none (a little more read back, nothing lost)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hermes_commons.read_positions import ReadPositions


def by_number(a: str, b: str) -> bool:
    return int(a) > int(b)


def before(a: str) -> str:
    return str(int(a) - 1)


def test_a_position_only_moves_forward_and_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "platforms" / "x" / "read.json"
    positions = ReadPositions(path, by_number, before)
    positions.saw("dm", "10")
    positions.saw("dm", "9")  # an older message handed over late: the position stays
    positions.saw("room", "5")
    positions.save()
    again = ReadPositions(path, by_number, before)
    assert sorted(again.active(60)) == [("dm", "10"), ("room", "5")]
    assert "dm" in again and "elsewhere" not in again


def test_the_oldest_conversations_are_forgotten_past_the_limit(tmp_path: Path) -> None:
    positions = ReadPositions(tmp_path / "read.json", by_number, before, limit=2)
    for number, conversation in enumerate(("a", "b", "c")):
        positions.saw(conversation, str(number))
    positions.saw("b", "9")  # read again: newest now
    positions.saw("d", "1")
    assert [c for c, _ in positions.active(60)] == ["b", "d"]


def test_only_recently_read_conversations_are_active(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    positions = ReadPositions(tmp_path / "read.json", by_number, before)
    positions.saw("old", "1")
    later = time.time() + 3600
    monkeypatch.setattr(time, "time", lambda: later)
    positions.saw("new", "2")
    assert positions.active(1800) == [("new", "2")]


def test_a_damaged_file_is_read_as_no_positions(tmp_path: Path) -> None:
    path = tmp_path / "read.json"
    path.write_text('{"dm": "not a pair"')
    assert ReadPositions(path, by_number, before).active(60) == []


def test_a_failed_message_holds_its_conversation_until_it_is_stored(tmp_path: Path) -> None:
    positions = ReadPositions(tmp_path / "read.json", by_number, before)
    positions.saw("dm", "10")
    positions.failed("dm", "11")
    positions.saw("dm", "12")  # stored after it: must not carry the position past 11
    assert positions.held() and positions.active(60) == [("dm", "10")]
    positions.saw("dm", "11")  # read back and stored at last
    assert not positions.held() and positions.active(60) == [("dm", "11")]


def test_a_failure_in_a_new_conversation_reads_back_from_just_before_it(tmp_path: Path) -> None:
    positions = ReadPositions(tmp_path / "read.json", by_number, before)
    positions.saw("dm", "20")
    positions.failed("dm", "15")  # an older one failed after a newer one was stored
    positions.failed("room", "7")
    assert sorted(positions.active(60)) == [("dm", "14"), ("room", "6")]


def test_storing_moves_the_position_only_once_the_message_is_stored(tmp_path: Path) -> None:
    import asyncio

    positions = ReadPositions(tmp_path / "read.json", by_number, before)

    async def refused() -> None:
        raise OSError("the store is full")

    async def stored() -> None:
        return None

    async def scenario() -> None:
        await positions.storing("dm", "5", stored())
        with pytest.raises(OSError):
            await positions.storing("dm", "6", refused())
        await positions.storing("dm", "7", stored())
        await positions.storing(None, "8", stored())  # a conversation not read back

    asyncio.run(scenario())
    assert positions.held() and positions.active(60) == [("dm", "5")]
