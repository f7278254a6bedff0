"""Schedules: what the user writes, and the instants it names."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hermes_plugin_cron.schedule import (
    ScheduleError,
    jitter_of,
    next_after,
    parse_duration,
    parse_schedule,
    zone,
)

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 3, 28, 12, 0, tzinfo=PARIS)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("every 30m", "interval"),
        ("Every 2 hours", "interval"),
        ("every 45s", "interval"),
        ("30m", "once"),
        ("1d", "once"),
        ("0 9 * * 1-5", "cron"),
        ("*/15 * * * *", "cron"),
        ("0 9 * * mon", "cron"),
        ("2026-12-24T09:00", "once"),
        ("2026-12-24T09:00:00+01:00", "once"),
        ("2026-12-24T08:00Z", "once"),
    ],
)
def test_what_people_write_is_understood(text, kind):
    assert parse_schedule(text, NOW)["kind"] == kind


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "the schedule is empty"),
        ("tomorrow-ish", "is not a schedule"),
        ("every fortnight", "is not a duration"),
        ("every 0m", "no time at all"),
        ("61 * * * *", "not a valid cron expression"),
        ("2026-13-40T09:00", "is not an ISO time"),
    ],
)
def test_what_cannot_be_used_says_what_to_write(text, says):
    with pytest.raises(ScheduleError, match=says) as raised:
        parse_schedule(text, NOW)
    assert "\n" not in str(raised.value)


def test_an_unknown_time_zone_is_one_line():
    with pytest.raises(ScheduleError, match="unknown time zone 'Mars/Olympus'"):
        zone("Mars/Olympus")


def test_a_cron_expression_keeps_its_local_hour_across_daylight_saving_time():
    schedule = parse_schedule("0 9 * * *", NOW)
    start = datetime(2026, 3, 27, 12, 0, tzinfo=PARIS).timestamp()
    found = []
    moment = next_after(schedule, start, start, PARIS)
    while moment is not None and moment <= start + 3 * 86400:
        found.append(moment)
        moment = next_after(schedule, moment, start, PARIS)
    hours = [datetime.fromtimestamp(i, PARIS).hour for i in found]
    assert hours == [9, 9, 9]  # 29 March is the change; 9:00 stays 9:00
    gaps = {round(b - a) for a, b in itertools.pairwise(found)}
    assert gaps == {86400 - 3600, 86400}


def test_an_interval_counts_from_its_anchor_so_a_late_run_shifts_nothing():
    schedule = parse_schedule("every 10m", NOW)
    anchor = NOW.timestamp()
    assert next_after(schedule, anchor, anchor, PARIS) == anchor + 600
    late = anchor + 600 + 250  # the first run went late
    assert next_after(schedule, late, anchor, PARIS) == anchor + 1200


def test_once_has_one_instant_then_none():
    schedule = parse_schedule("30m", NOW)
    moment = (NOW + timedelta(minutes=30)).timestamp()
    assert next_after(schedule, NOW.timestamp(), 0, PARIS) == moment
    assert next_after(schedule, moment, 0, PARIS) is None


def test_jitter_is_the_same_for_an_instant_and_spreads_jobs():
    assert jitter_of("a", 1000.0, 600) == jitter_of("a", 1000.0, 600)
    assert 0 <= jitter_of("a", 1000.0, 600) < 600
    assert len({round(jitter_of(str(n), 1000.0, 600)) for n in range(20)}) > 10
    assert jitter_of("a", 1000.0, 0) == 0


def test_durations():
    assert parse_duration("90s") == 90
    assert parse_duration("2h") == 7200
    assert parse_duration("1w") == 604800


def test_a_cron_schedule_is_explained_in_words_and_its_next_times_listed() -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from hermes_plugin_cron.schedule import explain, parse_schedule, upcoming

    paris = ZoneInfo("Europe/Paris")
    monday = datetime(2026, 12, 7, 8, 0, tzinfo=paris)
    weekdays = parse_schedule("30 9 * * 1-5", monday)
    assert explain(weekdays, paris) == "At 09:30, Monday through Friday (Europe/Paris)"
    times = upcoming(weekdays, monday.timestamp(), paris, after=monday.timestamp())
    shown = [datetime.fromtimestamp(t, paris).strftime("%a %H:%M") for t in times]
    assert shown == ["Mon 09:30", "Tue 09:30", "Wed 09:30", "Thu 09:30", "Fri 09:30"]
    seconds = parse_schedule("0 */5 * * * 15", monday)  # croniter's sixth field: seconds
    assert "15 seconds past the minute" in explain(seconds, paris)
    once = parse_schedule("2026-12-24T09:00", monday)
    assert explain(once, paris).startswith("once at 2026-12-24 09:00")
    assert len(upcoming(once, monday.timestamp(), paris, after=monday.timestamp())) == 1
