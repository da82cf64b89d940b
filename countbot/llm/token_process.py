"""Token counts from the token worker (`token_worker.py`), a child process started on demand.

The daemon never loads a tokenizer: tiktoken's constructor would hold its GIL for a tenth of a
second or more. It asks the child, in batches (the context keeper sends every text a fit needs
at once), and the child's first answer waits for its start and the load, once (~0.5 s on a
quiet machine; the event loop serves other sessions meanwhile). A child that fails, hangs or
does not answer within its wait makes `count` answer None, logged, and the caller counts with
upper bounds instead; for `rest` seconds after that it is not asked again, so a broken child
costs no turn a second wait.

A turn whose request nears its budget (`agent/context/tokens.PREPARE_SHARE`) has the child
started and its encoding loaded in the background (`prepare`): the later request that needs
counts finds it ready. A session that stays short never starts it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from countbot.common.line_worker import LineWorker, WorkerError
from countbot.llm.token_counter import encoding_name

log = logging.getLogger(__name__)

_WORKER = "countbot.llm.token_worker"
# A caller's longest wait for a running child (its answers take milliseconds), and for one that
# must start first (Python and the encoding's load: ~0.5 s quiet, seconds on a loaded machine).
WAIT = 10.0
START_WAIT = 30.0
# A request past this is taken for a hung child, which is killed.
REQUEST_TIMEOUT = 60.0
# Seconds after a failure during which upper bounds stand in without asking.
REST = 60.0
# The child and its tables end after this long without a count.
IDLE_UNLOAD = 600.0


class TokenProcess:
    """See the module docstring."""

    def __init__(
        self,
        wait: float = WAIT,
        start_wait: float = START_WAIT,
        timeout: float = REQUEST_TIMEOUT,
        rest: float = REST,
    ) -> None:
        self._worker = LineWorker(_WORKER, {}, idle_unload=IDLE_UNLOAD, timeout=timeout)
        self._waits = (start_wait, wait)
        self._rest = rest
        self._resting_until = 0.0
        # The encodings the running child has loaded (by its pid), and a load under way.
        self._ready: set[tuple[int, str]] = set()
        self._preparing: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs (the tests and the bench look)."""
        return self._worker.pid

    async def count(self, texts: Sequence[str], model: str) -> list[int] | None:
        """Tokens in each of `texts` for `model`; None when the child cannot say (logged)."""
        if not texts:
            return []
        if time.monotonic() < self._resting_until:
            return None
        request = {"op": "count", "encoding": encoding_name(model), "texts": list(texts)}
        try:
            started = self.pid is not None and self._preparing is None  # else it may load
            answer = await self._worker.call(request, self._waits[started])
        except WorkerError as exc:
            self._resting_until = time.monotonic() + self._rest
            log.warning("token counts unavailable (%s): upper bounds for %.0f s", exc, self._rest)
            return None
        return [int(n) for n in answer["counts"]]

    def prepare(self, model: str) -> None:
        """Start the child and load `model`'s encoding in the background, unless it is loaded,
        being loaded, or the child is resting after a failure; never waits."""
        name = encoding_name(model)
        pid = self.pid
        if (pid is not None and (pid, name) in self._ready) or self._preparing is not None:
            return
        if time.monotonic() < self._resting_until:
            return
        log.debug("starting the token worker ahead of need (%s)", name)
        self._preparing = asyncio.ensure_future(self._load(name))

    async def settled(self) -> None:
        """Wait until a start made ahead of need is over (a bench measures after it)."""
        if self._preparing is not None:
            await asyncio.shield(self._preparing)

    async def _load(self, name: str) -> None:
        """Ask the child to count nothing with `name`, which loads it (and starts the child)."""
        request = {"op": "count", "encoding": name, "texts": []}
        try:
            await self._worker.call(request, self._waits[self.pid is not None])
            if self.pid is not None:
                self._ready.add((self.pid, name))
        except WorkerError as exc:  # the request that needs counts tries again, and says so
            log.info("starting the token worker ahead of need failed: %s", exc)
        finally:
            self._preparing = None

    async def close(self) -> None:
        """End the child (and a load under way) and wait for it."""
        if self._preparing is not None:
            self._preparing.cancel()
            await asyncio.gather(self._preparing, return_exceptions=True)
        await self._worker.close()
