"""The token worker: `python -m countbot.llm.token_worker`, the child that holds the tokenizer.

tiktoken's `CoreBPE` constructor holds the GIL for its whole run (~0.1-0.2 s per encoding on a
quiet machine, much more under load), so loading it in the daemon, even in a worker thread,
stalls the event loop that serves every session. Here it stalls no one, and its tables
leave with the process. Its stdin carries one JSON line of set-up (none is needed),
then one line per request, each answered by one line on stdout:

    {"op": "count", "encoding": name, "texts": [...]}  -> {"counts": [...]}

A failed request answers {"error": "..."} and the worker stays up.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import IO

from countbot.llm.token_counter import count_texts


def serve(requests: IO[bytes], out: IO[bytes]) -> None:
    """Answer each request line after the set-up line, until end of input."""
    requests.readline()
    for line in requests:
        try:
            request = json.loads(line)
            reply = {"counts": count_texts(request["texts"], request["encoding"])}
        except Exception as exc:  # the daemon gets the reason and counts with upper bounds
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    # Ctrl-C in the daemon's terminal reaches its whole process group: the daemon ends the
    # worker itself (its stdin closes), so the signal must not print a traceback here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(sys.stdin.buffer, sys.stdout.buffer)
