"""A pids cgroup that caps how many processes sandboxed commands may have at once.

RLIMIT_NPROC, set inside the sandbox, is what stops a fork bomb for an ordinary user; the kernel
exempts real root from it, so a daemon running as root (containers) needs this cgroup instead.
One cgroup per daemon and limit holds every running command (they share the budget); it is named
for the daemon's pid, and empty ones left behind by dead daemons are removed when one is made.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "countbot-exec-"


def create_pids_cgroup(limit: int, root: Path = _ROOT) -> Path | None:
    """A fresh cgroup whose `pids.max` is `limit`; None when this machine does not let us make one.

    Blocking (a few small file writes): call it off the event loop.
    """
    for parent in _candidate_parents(root):
        try:
            _remove_stale(parent)
            group = parent / f"{_PREFIX}{os.getpid()}-{limit}"
            group.mkdir(exist_ok=True)
        except OSError:
            continue
        try:
            (group / "pids.max").write_text(f"{limit}\n")
        except OSError:
            _rmdir(group)
            continue
        return group
    return None


def join_file(group: Path) -> tuple[Path, str]:
    """The file a sandboxed shell writes to join `group`, and what it writes there.

    v1's `tasks` with "0" moves just the writing thread, which spares the kernel's global
    threadgroup lock and the RCU grace period it waits for (a delay at every command, longer on a
    busy machine); the shell has one thread, so that moves the whole process before it runs
    anything. v2 moves single threads only inside threaded subtrees: there it is `cgroup.procs` and
    `$$`. Blocking (a stat): call it off the event loop.
    """
    tasks = group / "tasks"
    return (tasks, "0") if tasks.is_file() else (group / "cgroup.procs", "$$")


def _candidate_parents(root: Path) -> list[Path]:
    """Our own cgroup in the v1 pids hierarchy and in the v2 one (pure or hybrid)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    parents: list[Path] = []
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if "pids" in controllers.split(","):
            parents.append(root / "pids" / relative)
        elif controllers == "":
            parents += [root / relative, root / "unified" / relative]
    return [parent for parent in parents if parent.is_dir()]


def _remove_stale(parent: Path) -> None:
    for group in parent.glob(f"{_PREFIX}*"):
        pid = group.name.removeprefix(_PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _rmdir(group)


def _rmdir(group: Path) -> None:
    # A cgroup with processes in it refuses rmdir (EBUSY): then it is not stale after all.
    with contextlib.suppress(OSError):
        group.rmdir()
