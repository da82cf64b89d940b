"""One SQLite connection, owned by one worker thread, so the event loop never blocks on disk.

Every call runs as its own transaction on that thread: writes are serialized without locks and
each finalized entry is durable once its `run` returns (WAL survives a killed process). Calls
made in the same pass of the event loop (a turn's answer and its usage row, a search beside a
look at the files) go to the thread as one batch and come back with one wake-up of the loop:
each hand-off costs more than most of the statements it carries. The thread is the database's
own, fed by a plain queue: a thread pool's `submit` (a future, a work item, its locks and the
pool's idle-thread check) cost the loop more per hand-off than the queue's wake-up.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from countbot.store.schema import MIGRATIONS, Migration

T = TypeVar("T")
log = logging.getLogger(__name__)
# One call queued for the database thread: the function, its arguments, where its outcome goes,
# and whether it is SQL (run in a transaction) or other blocking work.
_Queued = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]", bool]
# A job for the database's thread: a function and its arguments (None: stop).
_Job = tuple[Callable[..., None], tuple[Any, ...]] | None
# KiB of pages a connection keeps in its own cache (SQLite's default is 2,000): the pages a turn
# reads again are in the system's page cache anyway, and a smaller cache is full, and stops
# growing, after the first hundreds of turns instead of thousands.
CACHE_KIB = 1024


class DatabaseClosedError(RuntimeError):
    """Raised by `run` after `close`: a late write is a bug worth seeing, not a silent drop."""


class NewerSchemaError(RuntimeError):
    """The file was written by a newer CountBot: this one opens nothing and changes nothing."""

    def __init__(self, path: Path, version: int, known: int) -> None:
        super().__init__(
            f"{path} was written by a newer CountBot (its schema is version {version}; this "
            f"CountBot knows up to version {known}). Nothing was changed. Install the newer "
            "CountBot again, or restore a backup made by this version."
        )


class Database:
    """The store's SQLite file; open with `await Database.open(path)`."""

    def __init__(self, path: Path, worker: _Worker, conn: sqlite3.Connection) -> None:
        self.path = path
        self._worker = worker
        self._conn = conn
        self._closed = False
        # How often a call found that another connection (another process) had written to the
        # file since the call before: what is kept in memory about it is stale when this moved.
        self.outside_writes = 0
        self._data_version: int | None = None
        # Calls made in this pass of the loop, sent together at its end (`_send`).
        self._queued: list[_Queued] = []

    @classmethod
    async def open(cls, path: Path, migrations: Sequence[Migration] = MIGRATIONS) -> Database:
        """Create the file (and its folder) if needed and bring its schema up to date.

        `migrations` lets a feature keep a SQLite file of its own (the memory index) with the
        same guarantees.
        """
        path = Path(path)
        worker = _Worker()
        try:
            conn = await worker.call(_connect, path, migrations)
        except BaseException:
            worker.stop()
            raise
        return cls(path, worker, conn)

    def run(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Run `fn(conn, *args)` on the worker thread inside one transaction; await its result.

        The call is queued at once (not when the await begins), so calls made side by side in
        one pass of the loop share a hand-off. An exception rolls the transaction back and is
        raised at the await.
        """
        return self._queue(fn, args, True)

    def run_now(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Run `fn(conn, *args)` on the worker thread as SQLite's own autocommit, handed over at
        once: for a caller that answers someone only once its write is durable (a webhook's
        `202`), where each step costs latency. `fn` must write with one statement (SQLite makes
        it atomic and durable on its own); whatever it reads after is not in that transaction.

        It runs before the calls already waiting for the thread (after the one under way): a
        turn's writes queued behind each other must not hold a webhook's answer. No BEGIN /
        COMMIT around it and no look for other writers after: each statement on the thread gives
        up the GIL and takes it back, which waits while the event loop is busy.
        """
        if self._closed:
            raise DatabaseClosedError(f"database {self.path} is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._worker.put_first(_settle_one, loop, future, fn, (self._conn, *args))
        return future

    def run_blocking(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Run `fn(*args)`, blocking work that is not SQL (a look at files), on the worker
        thread with the calls queued beside it: one hand-off for both."""
        return self._queue(fn, args, False)

    def _queue(self, fn: Callable[..., T], args: tuple[Any, ...], sql: bool) -> asyncio.Future[T]:
        if self._closed:
            raise DatabaseClosedError(f"database {self.path} is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if not self._queued:
            loop.call_soon(self._send, loop)
        self._queued.append((fn, args, future, sql))
        return future

    def _send(self, loop: asyncio.AbstractEventLoop) -> None:
        """Hand the calls queued in this pass of the loop to the thread as one job."""
        batch, self._queued = self._queued, []
        if batch:
            self._worker.put(self._call_batch, loop, batch)

    def _call_batch(self, loop: asyncio.AbstractEventLoop, batch: list[_Queued]) -> None:
        """Run `batch` in order, each call its own transaction; one wake-up hands back all."""
        outcomes: list[tuple[Any, BaseException | None]] = []
        sql_ran = False
        for fn, args, future, sql in batch:
            if future.cancelled():  # its caller stopped waiting before it ran: as a queued job
                outcomes.append((None, None))
                continue
            sql_ran = sql_ran or sql
            try:
                outcomes.append((_transaction(self._conn, fn, args) if sql else fn(*args), None))
            except BaseException as exc:  # handed to the caller, as run_in_executor would
                outcomes.append((None, exc))
        if sql_ran:  # once a batch: the callers see none of its results before the check
            try:
                self._note_outside_writes()
            except sqlite3.Error:  # the calls' own outcomes say what is wrong with the file
                log.exception("checking %s for other writers failed", self.path)
        # RuntimeError: the loop closed meanwhile, and no one is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, batch, outcomes)

    def _note_outside_writes(self) -> None:
        """Count a commit by another connection since the last look (`outside_writes`)."""
        # Moves only when another connection committed (not for this one's own writes).
        (version,) = self._conn.execute("PRAGMA data_version").fetchone()
        if version != self._data_version:
            self.outside_writes += self._data_version is not None
            self._data_version = version

    async def close(self) -> None:
        """Finish queued calls, fold the WAL into the main file and close; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._send(asyncio.get_running_loop())  # calls made in this pass go before the close
        try:
            await self._worker.call(_shutdown, self._conn)
        finally:
            self._worker.stop(wait=True)


class _Worker:
    """The database's thread and the queue of jobs it runs in order.

    A daemon thread: a database left open must not keep the process from exiting (`close`
    finishes every queued call first; SQLite rolls back a transaction a dying process cut short).
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        # Jobs that go before those waiting in `_jobs` (each also puts a wake-up there).
        self._first: collections.deque[tuple[Callable[..., None], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._thread = threading.Thread(
            target=_serve, args=(self._jobs, self._first), name="countbot-sqlite", daemon=True
        )
        self._thread.start()

    def put(self, fn: Callable[..., None], *args: Any) -> None:
        """Run `fn(*args)` on the thread after the jobs put before it."""
        self._jobs.put((fn, args))

    def put_first(self, fn: Callable[..., None], *args: Any) -> None:
        """Run `fn(*args)` on the thread before the jobs waiting (after the one under way)."""
        self._first.append((fn, args))
        self._jobs.put((_nothing, ()))

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` run on the thread, its result or exception handed back to the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self.put(_settle_one, loop, future, fn, args)
        return await future

    def stop(self, *, wait: bool = False) -> None:
        """End the thread once the jobs put before have run (`wait`: until it has ended)."""
        self._jobs.put(None)
        if wait:
            self._thread.join()


def _serve(
    jobs: queue.SimpleQueue[_Job], first: collections.deque[tuple[Callable[..., None], tuple]]
) -> None:
    while (job := jobs.get()) is not None:
        while first:
            _run_job(*first.popleft())
        _run_job(*job)


def _run_job(fn: Callable[..., None], args: tuple[Any, ...]) -> None:
    try:
        fn(*args)
    except Exception:  # a bug in a job must not stop the thread the later jobs wait for
        log.exception("database job %s failed", getattr(fn, "__qualname__", fn))


def _nothing() -> None:
    """The wake-up a job put first leaves in the queue (the job itself ran before)."""


def _settle_one(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[T],
    fn: Callable[..., T],
    args: tuple[Any, ...],
) -> None:
    """On the thread: run `fn`, and hand its outcome to `future` on the loop."""
    try:
        outcome: tuple[Any, BaseException | None] = (fn(*args), None)
    except BaseException as exc:  # handed to the caller, as run_in_executor would
        outcome = (None, exc)
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: no one is waiting
        loop.call_soon_threadsafe(_settle, [(fn, args, future, False)], [outcome])


def _connect(path: Path, migrations: Sequence[Migration]) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Autocommit mode: transactions are explicit (`_transaction`), never implied by a statement.
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=5000")  # first: switching to WAL may wait for a lock
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        _migrate(conn, path, migrations)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path, migrations: Sequence[Migration]) -> None:
    """Bring the file to the newest schema in one transaction.

    A kill in the middle leaves the old version whole (SQLite rolls the transaction back) and
    the next open migrates again. Before an existing file is migrated, a copy of it is kept
    beside it (`keep_copy`). The version is read under the write lock, so two processes opening
    a new file at once cannot both apply the same script.
    """
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > len(migrations):
        raise NewerSchemaError(path, version, len(migrations))
    if 0 < version < len(migrations):
        keep_copy(conn, path, version)
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > len(migrations):
            raise NewerSchemaError(path, version, len(migrations))
        for script in migrations[version:]:
            if callable(script):  # a step SQL alone cannot take, inside the same transaction
                script(conn)
                continue
            for statement in _statements(script):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(migrations)}")
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def keep_copy(conn: sqlite3.Connection, path: Path, version: int) -> Path:
    """`<file>.v<version>.bak`, a whole copy of the file as it is before its migration (SQLite's
    online backup: consistent while other processes write). One per version: a migration
    interrupted and run again keeps the same copy's contents."""
    copy = path.with_name(f"{path.name}.v{version}.bak")
    scratch = copy.with_name(f".{copy.name}.partial")
    with contextlib.closing(sqlite3.connect(scratch)) as target:
        conn.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    os.replace(scratch, copy)
    return copy


def _statements(script: str) -> Iterator[str]:
    # Not executescript: on Python 3.11 it commits the open transaction before it starts.
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending  # a last statement without its semicolon


def exists(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> bool:
    """Whether the query `sql` (a `SELECT 1 ...`) finds a row."""
    return conn.execute(sql, args).fetchone() is not None


def _transaction(conn: sqlite3.Connection, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    # Deferred: reads take no write lock. Write functions start with their write statement so
    # another process holding the lock makes them wait (busy_timeout) instead of failing.
    conn.execute("BEGIN")
    try:
        result = fn(conn, *args)
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
    return result


def _settle(batch: list[_Queued], outcomes: list[tuple[Any, BaseException | None]]) -> None:
    """On the loop: each call's result or exception to its caller (unless it stopped waiting)."""
    for (_, _, future, _), (result, error) in zip(batch, outcomes, strict=True):
        if future.cancelled():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


def _shutdown(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA optimize")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
