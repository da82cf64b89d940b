"""What a scheduled job is: its schedule, where its answer goes, and the record of one run.

These are plain data. The store keeps them as readable columns (`to_row`/`from_row`), so a user
can inspect `cron_jobs` with any SQLite tool; `triggers.py` turns a `Schedule` into fire times.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal, TypeVar

from countbot.config.settings import MAIN

ScheduleKind = Literal["cron", "every", "at"]
SCHEDULE_KINDS: tuple[ScheduleKind, ...] = ("cron", "every", "at")
RunStatus = Literal["running", "ok", "error", "timeout", "missed"]
RunTrigger = Literal["schedule", "manual"]
T = TypeVar("T")

# The delivery "channel" that means: the answer stays in the job's session, shown in the web UI.
WEB = "web"


class JobError(ValueError):
    """A job definition that cannot work; the message says what to change.

    `code` (with `args`) names the message for a page in another language: the web UI says the
    same in its own words where it knows the code, and shows the message where it does not.
    """

    def __init__(self, message: str, code: str = "", **args: str | int) -> None:
        super().__init__(message)
        self.code = code
        self.args_of_code = args


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a job fires, read in `timezone` (an IANA name).

    `value` is normalized by `triggers.parse_schedule`: five crontab fields for "cron", whole
    seconds for "every", an ISO date-time with its UTC offset for "at".
    """

    kind: ScheduleKind
    value: str
    timezone: str

    def describe(self) -> str:
        if self.kind == "every":
            return f"every {_duration_text(int(self.value))}"
        if self.kind == "at":
            return f"once at {self.value}"
        return f"cron '{self.value}' ({self.timezone})"


@dataclass(frozen=True, slots=True)
class Delivery:
    """Where a job's answer goes: a channel's chat, the web UI (`channel == WEB`), or nowhere."""

    channel: str | None = None
    chat_id: str | None = None

    @property
    def kind(self) -> Literal["chat", "web", "none"]:
        if self.channel is None:
            return "none"
        return "web" if self.channel == WEB else "chat"

    @classmethod
    def parse(cls, text: str | None) -> Delivery:
        """`telegram:12345`, `web`, or `none`/empty; JobError for anything else."""
        text = (text or "").strip()
        if text.lower() in ("", "none"):
            return cls()
        if text.lower() == WEB:
            return cls(WEB)
        channel, sep, chat_id = text.partition(":")
        if not sep or not channel.strip() or not chat_id.strip():
            raise JobError(
                f"delivery {text!r} is not understood: use '<channel>:<chat_id>' "
                "(e.g. telegram:12345), 'web' or 'none'",
                "cron.delivery",
                text=text,
            )
        return cls(channel.strip(), chat_id.strip())

    def __str__(self) -> str:
        if self.kind == "chat":
            return f"{self.channel}:{self.chat_id}"
        return self.kind


@dataclass(frozen=True, slots=True)
class Job:
    """One scheduled job; times are Unix seconds."""

    id: str
    name: str
    schedule: Schedule
    prompt: str
    session: str
    delivery: Delivery
    enabled: bool
    created_from: str
    created_at: float
    updated_at: float
    # Intervals count from here (when the schedule was set).
    schedule_since: float
    # Fire times up to here have been handled: run, or recorded as missed.
    checked_through: float
    consecutive_failures: int = 0
    # The agent whose house runs it and whose `cron` tool sees it (`agents:` in config.yaml).
    agent: str = MAIN

    def to_row(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "schedule_kind": self.schedule.kind,
            "schedule_value": self.schedule.value,
            "timezone": self.schedule.timezone,
            "schedule_since": self.schedule_since,
            "prompt": self.prompt,
            "session_id": self.session,
            "deliver_channel": self.delivery.channel,
            "deliver_chat_id": self.delivery.chat_id,
            "enabled": int(self.enabled),
            "created_from": self.created_from,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "checked_through": self.checked_through,
            "consecutive_failures": self.consecutive_failures,
            "agent": self.agent,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Job:
        return _from_row(
            cls,
            row,
            schedule=Schedule(row["schedule_kind"], row["schedule_value"], row["timezone"]),
            session=row["session_id"],
            delivery=Delivery(row["deliver_channel"], row["deliver_chat_id"]),
            enabled=bool(row["enabled"]),
        )


@dataclass(frozen=True, slots=True)
class JobRun:
    """One run of a job (or a record of runs that were missed) as its history shows it."""

    id: int
    job_id: str
    trigger: RunTrigger
    scheduled_for: float | None
    started_at: float
    ended_at: float | None
    status: RunStatus
    error: str = ""
    # The final answer: what was delivered, or would have been.
    output: str = ""
    delivered: bool = False
    delivery_detail: str = ""
    # E.g. a command denied because nobody was there to approve it; one per line.
    notes: str = ""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> JobRun:
        return _from_row(cls, row, delivered=bool(row["delivered"]), notes=row.get("notes") or "")


def _from_row(cls: type[T], row: dict[str, Any], **converted: Any) -> T:
    """A `cls` from a table row whose columns carry its fields' names, but for `converted`."""
    names = (f.name for f in fields(cls) if f.name not in converted)
    return cls(**{name: row[name] for name in names}, **converted)


def _duration_text(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
