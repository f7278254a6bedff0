"""When a job is due: parsing what the user wrote, and the instants it names.

A schedule is kept as hermes-agent keeps it in jobs.json (``kind`` ``cron`` / ``interval`` /
``once``, with ``expr`` / ``minutes`` / ``run_at`` and a ``display``), so a home moved over
still reads. Instants are Unix times. Cron expressions are croniter's, evaluated in the job's
time zone (so "9 every morning" stays 9 across a change of daylight saving time); intervals
count from the job's anchor (its creation), so a late run never shifts the ones after it.
"""

from __future__ import annotations

import hashlib
import math
import re
from datetime import datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "ScheduleError",
    "describe",
    "jitter_of",
    "next_after",
    "parse_duration",
    "parse_schedule",
    "zone",
]

MAX_INSTANTS = 100_000
"""At most this many due instants are accounted for at once (a minutely job off for 69 days)."""

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(
    r"^(\d+)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)$", re.I
)


class ScheduleError(ValueError):
    """A schedule, a duration or a time zone that cannot be used; the message says what to
    write instead, in one line."""


def zone(name: str | None) -> tzinfo:
    """The time zone ``name`` (``Europe/Paris``), or this machine's own when None."""
    if not name:
        local = datetime.now().astimezone().tzinfo
        assert local is not None
        return local
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"unknown time zone {name!r}: use an IANA name such as Europe/Paris or UTC"
        ) from None


def parse_duration(text: str) -> int:
    """Seconds in ``30m``, ``2h``, ``1d``, ``45s``, ``1w``."""
    match = _DURATION.match(text.strip())
    if not match:
        raise ScheduleError(f"{text!r} is not a duration: write 30s, 30m, 2h, 1d or 1w")
    seconds = int(match.group(1)) * _UNITS[match.group(2)[0].lower()]
    if seconds <= 0:
        raise ScheduleError(f"{text!r} is no time at all: give a duration over zero")
    return seconds


def _looks_like_cron(parts: list[str]) -> bool:
    return len(parts) in (5, 6) and all(re.fullmatch(r"[\d*,/\-A-Za-z?LW#]+", p) for p in parts)


def parse_schedule(text: str, now: datetime) -> dict[str, Any]:
    """The schedule ``text`` means, as stored. ``now`` (aware, in the job's zone) anchors
    ``30m`` (once, that long from now) and ISO times without a zone.

    ``every 30m`` repeats; ``30m`` runs once after that long; ``0 9 * * 1-5`` is a cron
    expression; ``2026-12-24T09:00`` (or with an offset) runs once then."""
    written = " ".join(text.split())
    if not written:
        raise ScheduleError("the schedule is empty: write 'every 30m', '0 9 * * *' or '2h'")
    lowered = written.lower()
    if lowered.startswith("every "):
        seconds = parse_duration(written[6:])
        return {
            "kind": "interval",
            "minutes": max(1, round(seconds / 60)),
            "seconds": seconds,
            "display": f"every {written[6:].strip()}",
        }
    parts = written.split()
    if _looks_like_cron(parts):
        from croniter import croniter

        if not croniter.is_valid(written):
            raise ScheduleError(
                f"{written!r} is not a valid cron expression (minute hour day month weekday)"
            )
        return {"kind": "cron", "expr": written, "display": written}
    if re.match(r"^\d{4}-\d{2}-\d{2}", written):
        try:
            moment = datetime.fromisoformat(written.replace("Z", "+00:00"))
        except ValueError:
            raise ScheduleError(
                f"{written!r} is not an ISO time: write 2026-12-24T09:00 (or with +01:00)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=now.tzinfo)
        return {
            "kind": "once",
            "run_at": moment.isoformat(),
            "display": f"once at {moment.strftime('%Y-%m-%d %H:%M %Z').strip()}",
        }
    try:
        seconds = parse_duration(written)
    except ScheduleError:
        raise ScheduleError(
            f"{written!r} is not a schedule: write 'every 30m' (repeats), '30m' (once, after "
            "that long), a cron expression such as '0 9 * * 1-5', or a time such as "
            "2026-12-24T09:00"
        ) from None
    moment = now + timedelta(seconds=seconds)
    return {"kind": "once", "run_at": moment.isoformat(), "display": f"once in {written}"}


def _interval_seconds(schedule: dict[str, Any]) -> float:
    seconds = schedule.get("seconds")
    if isinstance(seconds, int | float) and seconds > 0:
        return float(seconds)
    return float(schedule.get("minutes") or 0) * 60


def next_after(schedule: dict[str, Any], after: float, anchor: float, tz: tzinfo) -> float | None:
    """The first instant strictly after ``after`` (None: the schedule has no more)."""
    kind = schedule.get("kind")
    if kind == "once":
        moment = datetime.fromisoformat(str(schedule["run_at"])).timestamp()
        return moment if moment > after else None
    if kind == "interval":
        step = _interval_seconds(schedule)
        if step <= 0:
            return None
        if after < anchor + step:
            return anchor + step
        count = math.floor((after - anchor) / step) + 1
        return anchor + count * step
    if kind == "cron":
        from croniter import croniter

        start = datetime.fromtimestamp(after, tz)
        return float(croniter(str(schedule["expr"]), start).get_next(float))
    raise ScheduleError(f"unknown schedule kind {kind!r} in jobs.json")


def jitter_of(job_id: str, instant: float, jitter_seconds: float) -> float:
    """A delay in [0, jitter) for one instant of one job: the same every time it is asked
    (a restart does not move it), different between jobs (they spread out)."""
    if jitter_seconds <= 0:
        return 0.0
    digest = hashlib.sha256(f"{job_id}:{instant:.0f}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") % 10_000) / 10_000 * jitter_seconds


def describe(schedule: dict[str, Any]) -> str:
    return str(schedule.get("display") or schedule.get("expr") or schedule.get("kind"))


def when(moment: float | str | None, tz: tzinfo | None = None, *, weekday: bool = False) -> str:
    """A time as the commands and the dashboard show it (``-`` for none); an ISO text
    as it is written."""
    if moment is None or moment == "":
        return "-"
    if isinstance(moment, str):
        try:
            return datetime.fromisoformat(moment).strftime("%Y-%m-%d %H:%M")
        except ValueError:
            return moment
    return datetime.fromtimestamp(moment, tz).strftime(
        "%a %Y-%m-%d %H:%M" if weekday else "%Y-%m-%d %H:%M"
    )


def explain(schedule: dict[str, Any], tz: tzinfo) -> str:
    """The schedule in words: a cron expression read out by cron-descriptor (the field's
    port of cron-expression-descriptor), an interval or a single time as written."""
    if schedule.get("kind") != "cron":
        return describe(schedule)
    from cron_descriptor import (  # type: ignore[import-untyped]  # it ships no type hints
        FormatException,
        MissingFieldException,
        Options,
        WrongArgumentException,
        get_description,
    )

    options = Options()
    options.use_24hour_time_format = True
    options.throw_exception_on_parse_error = True
    parts = str(schedule["expr"]).split()
    if len(parts) == 6:  # croniter's sixth field is the seconds; cron-descriptor's first
        parts = [parts[5], *parts[:5]]
    try:
        words = str(get_description(" ".join(parts), options))
    except (FormatException, MissingFieldException, WrongArgumentException, ValueError):
        return describe(schedule)
    return f"{words} ({tz})"


def upcoming(
    schedule: dict[str, Any], anchor: float, tz: tzinfo, *, after: float, count: int = 5
) -> list[float]:
    """The next ``count`` instants after ``after`` (fewer when the schedule ends)."""
    found: list[float] = []
    moment: float | None = after
    while len(found) < count and moment is not None:
        moment = next_after(schedule, moment, anchor, tz)
        if moment is not None:
            found.append(moment)
    return found
