"""The child process that runs a GGUF model with xllamacpp and serves it on loopback.

Started by `LocalServer` as `python -m countbot.local_model.server_main`; its options arrive as one
JSON line on stdin (the API key stays out of the process list), it prints the address it listens
on as one JSON line on stdout, then serves until stdin closes (its parent is gone) or a signal.
A separate process keeps a native crash or a runaway allocation out of the daemon, and lets the
daemon restart the model without restarting itself.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    """Serve the model described on stdin; exit when stdin reaches its end."""
    options = json.loads(sys.stdin.readline())
    import xllamacpp  # only the child needs the native library

    params = xllamacpp.CommonParams()
    params.model.path = options["model"]
    params.n_ctx = options["context_size"]
    params.cpuparams.n_threads = options["threads"]
    params.cpuparams_batch.n_threads = options["threads"]
    params.cache_ram_mib = options["cache_ram_mb"]
    params.n_parallel = 1  # one turn at a time; a second queues rather than halving the context
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.api_keys = [options["api_key"]]
    params.endpoint_slots = True  # behind the key: lets tests and doctor see generation stop
    params.warmup = False
    server = xllamacpp.Server(params)
    print(json.dumps({"address": server.listening_address}), flush=True)
    sys.stdin.read()  # blocks until the parent closes the pipe or dies
    return 0


if __name__ == "__main__":
    sys.exit(main())
