"""Fire times: crontab meaning, time zones, a DST change, intervals, one-shots and missed runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from countbot.scheduler.jobs import JobError, Schedule
from countbot.scheduler.triggers import (
    build_trigger,
    next_fire,
    parse_interval,
    parse_schedule,
    plan_due,
)
from tests.scheduler.conftest import FRIDAY

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def fires(
    schedule: Schedule, start: datetime, count: int, since: float | None = None
) -> list[datetime]:
    trigger = build_trigger(schedule, since if since is not None else start.timestamp())
    found: list[datetime] = []
    fire = next_fire(trigger, start)
    while fire is not None and len(found) < count:
        found.append(fire.astimezone(UTC))
        fire = trigger.get_next_fire_time(fire, fire)
    return found


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_weekday_cron_fires_at_local_eight_across_the_spring_dst_change() -> None:
    schedule = parse_schedule("cron", "0 8 * * 1-5", "Europe/Berlin", FRIDAY)
    # Friday 8:00 CET (07:00 UTC); the weekend is skipped; Monday 8:00 CEST is 06:00 UTC.
    assert fires(schedule, FRIDAY, 3) == [
        utc(2026, 3, 27, 7),
        utc(2026, 3, 30, 6),
        utc(2026, 3, 31, 6),
    ]


def test_the_same_expression_follows_each_time_zone() -> None:
    start = utc(2026, 3, 6, 0)
    berlin = parse_schedule("cron", "30 9 * * *", "Europe/Berlin", start)
    new_york = parse_schedule("cron", "30 9 * * *", "America/New_York", start)
    assert fires(berlin, start, 1) == [utc(2026, 3, 6, 8, 30)]
    # New York moves to daylight time on 2026-03-08: 14:30 UTC, then 13:30 UTC.
    assert fires(new_york, start, 4) == [
        utc(2026, 3, 6, 14, 30),
        utc(2026, 3, 7, 14, 30),
        utc(2026, 3, 8, 13, 30),
        utc(2026, 3, 9, 13, 30),
    ]


def test_a_time_skipped_by_the_dst_change_fires_once_that_day() -> None:
    schedule = parse_schedule("cron", "30 2 * * *", "Europe/Berlin", FRIDAY)
    got = fires(schedule, FRIDAY, 4)
    assert [f.date().isoformat() for f in got] == [
        "2026-03-28",
        "2026-03-29",
        "2026-03-30",
        "2026-03-31",
    ]
    assert got[0] == utc(2026, 3, 28, 1, 30) and got[2] == utc(2026, 3, 30, 0, 30)


def test_crontab_weekdays_mean_what_crontab_means() -> None:
    monday = utc(2026, 3, 30, 12)
    sundays = fires(parse_schedule("cron", "0 12 * * 0", "UTC", monday), monday, 2)
    also_sundays = fires(parse_schedule("cron", "0 12 * * 7", "UTC", monday), monday, 2)
    assert sundays == also_sundays == [utc(2026, 4, 5, 12), utc(2026, 4, 12, 12)]
    tuesday = monday + timedelta(days=1)
    long_weekend = fires(parse_schedule("cron", "0 12 * * fri-mon", "UTC", tuesday), tuesday, 4)
    assert [f.strftime("%a") for f in long_weekend] == ["Fri", "Sat", "Sun", "Mon"]
    macro = parse_schedule("cron", "@daily", "UTC", monday)
    assert macro.value == "0 0 * * *"


def test_interval_counts_real_time_so_its_local_hour_moves_with_dst() -> None:
    schedule = parse_schedule("every", "1d", "Europe/Berlin", FRIDAY)
    since = utc(2026, 3, 27, 7).timestamp() - 86400  # set a day before Friday 8:00 CET
    got = fires(schedule, FRIDAY, 3, since=since)
    assert got == [utc(2026, 3, 27, 7), utc(2026, 3, 28, 7), utc(2026, 3, 29, 7)]
    assert [f.astimezone(BERLIN).hour for f in got] == [8, 8, 9]


def test_one_shot_fires_once_in_its_zone() -> None:
    schedule = parse_schedule("at", "2026-04-01T09:00", "America/New_York", FRIDAY)
    assert schedule.value == "2026-04-01T09:00:00-04:00"
    assert fires(schedule, FRIDAY, 5) == [utc(2026, 4, 1, 13)]
    assert fires(schedule, utc(2026, 4, 2), 5) == []


@pytest.mark.parametrize(
    ("kind", "value", "zone", "message"),
    [
        ("cron", "0 8 * *", "UTC", "five fields"),
        ("cron", "0 25 * * *", "UTC", "invalid"),
        ("cron", "0 8 * * 9", "UTC", "weekday"),
        ("every", "fortnightly", "UTC", "not understood"),
        ("every", "30s", "UTC", "shortest interval"),
        ("at", "2026-03-01T09:00", "UTC", "already passed"),
        ("at", "next tuesday", "UTC", "ISO format"),
        ("cron", "0 8 * * *", "Mars/Olympus", "time zone"),
        ("weekly", "1", "UTC", "unknown"),
    ],
)
def test_bad_schedules_say_what_is_wrong(kind: str, value: str, zone: str, message: str) -> None:
    with pytest.raises(JobError, match=message):
        parse_schedule(kind, value, zone, FRIDAY)


def test_intervals_read_like_people_write_them() -> None:
    assert parse_interval("3600") == 3600
    assert parse_interval("15m") == 900
    assert parse_interval("1h30m") == 5400
    assert parse_interval("2d") == 172800


def test_plan_due_runs_the_latest_fire_within_grace_once_and_counts_older_as_missed() -> None:
    trigger = build_trigger(parse_schedule("cron", "0 * * * *", "UTC", FRIDAY), FRIDAY.timestamp())
    now = utc(2026, 3, 27, 9, 2)
    plan = plan_due(trigger, FRIDAY, now, timedelta(minutes=5))
    assert plan.due == utc(2026, 3, 27, 9)
    assert (plan.missed, plan.first_missed, plan.last_missed) == (
        2,
        utc(2026, 3, 27, 7),
        utc(2026, 3, 27, 8),
    )
    later = plan_due(trigger, FRIDAY, utc(2026, 3, 27, 9, 30), timedelta(minutes=5))
    assert later.due is None and later.missed == 3
    nothing = plan_due(trigger, utc(2026, 3, 27, 9), utc(2026, 3, 27, 9, 30), timedelta(minutes=5))
    assert nothing.due is None and nothing.missed == 0


def test_plan_due_forgives_the_timers_own_lateness_even_without_grace() -> None:
    trigger = build_trigger(parse_schedule("cron", "0 * * * *", "UTC", FRIDAY), FRIDAY.timestamp())
    plan = plan_due(trigger, FRIDAY, utc(2026, 3, 27, 7, 0, 2), timedelta(0))
    assert plan.due == utc(2026, 3, 27, 7) and plan.missed == 0


def test_plan_due_stops_counting_a_huge_backlog() -> None:
    every_minute = parse_schedule("every", "60", "UTC", FRIDAY)
    trigger = build_trigger(every_minute, FRIDAY.timestamp())
    plan = plan_due(trigger, FRIDAY, FRIDAY + timedelta(days=30), timedelta(minutes=5))
    assert plan.capped and plan.missed == 10_000
    assert plan.due == FRIDAY + timedelta(days=30)
