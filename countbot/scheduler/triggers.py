"""From a `Schedule` to fire times: parsing what people write, APScheduler triggers, due runs.

APScheduler 3 computes fire times (time zones and DST included); this module decides which of
them are due at a given instant, which were missed, and normalizes what users and the model type
("0 8 * * 1-5", "2h", "2026-05-01T09:00") into a `Schedule` that always means the same thing.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from countbot.scheduler.clock import moment
from countbot.scheduler.jobs import SCHEDULE_KINDS, JobError, Schedule

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from apscheduler.triggers.base import BaseTrigger
    from apscheduler.triggers.cron import CronTrigger

# APScheduler's triggers (and its package, which reads its own metadata): imported by
# `load_triggers` once there is a job to read, so a daemon without jobs never holds them.

_TRIGGER_KINDS = ("cron", "date", "interval")  # what `_import_triggers` imports

MIN_INTERVAL = 60
# The timer wakes a little after the instant it aimed at; that is never a miss.
TIMER_JITTER = timedelta(seconds=5)
# Missed fire times are counted up to here (a minutely job down for a month stops counting).
MAX_COUNTED = 10_000

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_CRON_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+)\s*([smhd])")


@dataclass(frozen=True, slots=True)
class DuePlan:
    """What to do about a job's fire times between the last check and now."""

    # The one run to make now: the latest fire time still within the grace period.
    due: datetime | None
    # Older fire times, recorded as missed and never replayed.
    missed: int
    first_missed: datetime | None
    last_missed: datetime | None
    # More than MAX_COUNTED were missed; `missed` is a lower bound.
    capped: bool = False


def zone_name(configured: str | None) -> str:
    """The IANA zone schedules are read in: the configured one, else the system's, else UTC."""
    if configured:
        return configured
    from tzlocal import get_localzone_name  # APScheduler's own dependency

    try:
        return get_localzone_name() or "UTC"
    except Exception:  # an unreadable /etc/localtime must not stop the scheduler
        return "UTC"


def parse_schedule(kind: str, value: str, timezone: str, now: datetime) -> Schedule:
    """A normalized, valid `Schedule`, or JobError saying what is wrong with the input."""
    if kind not in SCHEDULE_KINDS:
        raise JobError(f"schedule kind {kind!r} is unknown: use one of {', '.join(SCHEDULE_KINDS)}")
    zone = _zone(timezone)
    value = value.strip()
    if kind == "cron":
        fields = _MACROS.get(value.lower(), value).split()
        if len(fields) != 5:
            raise JobError(
                f"cron expression {value!r} needs five fields: minute hour day month weekday "
                "(e.g. '0 8 * * 1-5' for 8:00 on weekdays)",
                "cron.fields",
                value=value,
            )
        schedule = Schedule("cron", " ".join(fields), timezone)
        _cron_trigger(fields, zone)  # raises JobError when a field is out of range
        return schedule
    if kind == "every":
        return Schedule("every", str(parse_interval(value)), timezone)
    return Schedule("at", _parse_at(value, zone, now).isoformat(), timezone)


def parse_interval(text: str) -> int:
    """Seconds from "3600", "90s", "15m", "2h", "1d" or "1h30m"; at least MIN_INTERVAL."""
    text = text.strip().lower()
    if text.isdigit():
        seconds = int(text)
    elif _DURATION.sub("", text).strip() == "" and _DURATION.search(text):
        seconds = sum(int(n) * _UNITS[unit] for n, unit in _DURATION.findall(text))
    else:
        raise JobError(
            f"interval {text!r} is not understood: use seconds or e.g. 15m, 2h, 1d",
            "cron.interval",
            value=text,
        )
    if seconds < MIN_INTERVAL:
        words = f"the shortest interval is {MIN_INTERVAL} seconds"
        raise JobError(words, "cron.shortest", seconds=MIN_INTERVAL)
    return seconds


async def load_triggers() -> None:
    """Import APScheduler's triggers in a worker thread, once: call it on the event loop before
    the functions here that build a trigger (they import them where they are already loaded)."""
    if not all(f"apscheduler.triggers.{kind}" in sys.modules for kind in _TRIGGER_KINDS):
        await asyncio.to_thread(_import_triggers)


def _import_triggers() -> None:
    from apscheduler.triggers.cron import CronTrigger  # noqa: F401
    from apscheduler.triggers.date import DateTrigger  # noqa: F401
    from apscheduler.triggers.interval import IntervalTrigger  # noqa: F401


def build_trigger(schedule: Schedule, since: float) -> BaseTrigger:
    """The APScheduler trigger for `schedule`; an interval counts from `since` (Unix time)."""
    from apscheduler.triggers.date import DateTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    zone = _zone(schedule.timezone)
    if schedule.kind == "cron":
        return _cron_trigger(schedule.value.split(), zone)
    if schedule.kind == "every":
        seconds = int(schedule.value)
        start = moment(since + seconds).astimezone(zone)
        return IntervalTrigger(seconds=seconds, start_date=start, timezone=zone)
    return DateTrigger(run_date=datetime.fromisoformat(schedule.value), timezone=zone)


def next_fire(trigger: BaseTrigger, now: datetime) -> datetime | None:
    """The first fire time at or after `now`, None when the schedule has no more."""
    fire = trigger.get_next_fire_time(None, now)
    return fire if fire is not None and fire >= now else None


def plan_due(trigger: BaseTrigger, after: datetime, now: datetime, grace: timedelta) -> DuePlan:
    """Sort the fire times in (`after`, `now`] into the one due run and the missed ones."""
    window_start = now - max(grace, TIMER_JITTER)
    missed, first, last, capped, due = 0, None, None, False, None
    fire = _first_after(trigger, after)
    while fire is not None and fire <= now:
        if fire >= window_start:
            due = fire
        elif missed < MAX_COUNTED:
            missed += 1
            first = first or fire
            last = fire
        else:
            capped = True
            fire = trigger.get_next_fire_time(None, window_start)
            continue
        fire = trigger.get_next_fire_time(fire, fire)
    return DuePlan(due, missed, first, last, capped)


def _first_after(trigger: BaseTrigger, after: datetime) -> datetime | None:
    fire = trigger.get_next_fire_time(None, after + timedelta(microseconds=1))
    # A date trigger answers its one date whatever `now` is.
    return fire if fire is not None and fire > after else None


def _zone(name: str) -> ZoneInfo:
    # zoneinfo (with sysconfig, which it reads for TZPATH) loads with the first job.
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise JobError(
            f"time zone {name!r} is unknown: use an IANA name like Europe/Berlin",
            "cron.zone",
            value=name,
        ) from None


def _cron_trigger(fields: list[str], zone: ZoneInfo) -> CronTrigger:
    from apscheduler.triggers.cron import CronTrigger

    minute, hour, day, month, weekday = fields
    try:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=_weekdays(weekday),
            timezone=zone,
        )
    except ValueError as exc:
        expression = " ".join(fields)
        raise JobError(
            f"cron expression {expression!r} is invalid: {exc}", "cron.invalid", value=expression
        ) from None


def _weekdays(field: str) -> str:
    """Crontab's weekday field (0 or 7 = Sunday) as APScheduler's day names.

    APScheduler 3 numbers weekdays from Monday, so passing "1-5" through would mean Tuesday to
    Saturday; expanding to names keeps the crontab meaning people expect.
    """
    if field == "*":
        return "*"
    days: set[int] = set()
    for item in field.lower().split(","):
        span, _, step_text = item.partition("/")
        step = _number(step_text, 1, 7) if step_text else 1
        if span == "*":
            low, high = 0, 6
        else:
            first, _, end = span.partition("-")
            low = _day(first)
            high = _day(end) if end else (6 if step_text else low)
            if high < low:  # "fri-mon" wraps the week
                high += 7
        days.update(d % 7 for d in range(low, high + 1, step))
    return ",".join(_CRON_DAYS[d] for d in sorted(days, key=lambda d: (d - 1) % 7))


def _day(text: str) -> int:
    if text in _CRON_DAYS:
        return _CRON_DAYS.index(text)
    return _number(text, 0, 7) % 7


def _number(text: str, low: int, high: int) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise JobError(f"weekday value {text!r} must be {low}-{high} or a day name like mon")
    return int(text)


def _parse_at(text: str, zone: ZoneInfo, now: datetime) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise JobError(
            f"date-time {text!r} is not understood: use ISO format like 2026-05-01T09:00",
            "cron.at",
            value=text,
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    if when <= now:
        raise JobError(f"{when.isoformat()} has already passed", "cron.past", when=when.isoformat())
    return when
