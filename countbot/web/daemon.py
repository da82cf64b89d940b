"""`countbot run`: one process serving the UI, the API and the WebSocket until SIGTERM/SIGINT.

The listening socket is bound before the event loop starts, so a refused start (no token on a
public address, a second daemon on the same data folder, a busy port) exits with a clear message
and nothing half-started. Shutdown stops taking turns, lets the running ones finish within
`web.shutdown_grace` (then cancels them), closes the connections, flushes the store and exits 0,
saying what it is doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import countbot.speedups.lean_imports  # noqa: F401  (first: before anything imports starlette)
from countbot.agents.houses import Houses
from countbot.backup.schedule import BackupSchedule
from countbot.browser.feature import BrowserFeature
from countbot.channels.manager import ChannelManager
from countbot.common.logs import configure_logging
from countbot.config.settings import Settings
from countbot.gateway.gateway import Gateway, OneLoop, TurnLoop
from countbot.llm.litellm_import import preload_litellm
from countbot.llm.provider_path import takes_direct_path
from countbot.local_model.models import EMBEDDED_NOTICE, effective_model, embedded_default
from countbot.runtime.assembly import open_runtime, secret_masker
from countbot.runtime.features import Feature
from countbot.scheduler.assembly import JobsFeature, start_scheduler
from countbot.speedups.heap_trim import trim_when_quiet
from countbot.speedups.uvicorn_parts import Config, Server, WebSocketsSansIOProtocol, log_as_uvicorn
from countbot.store.database import NewerSchemaError
from countbot.subagents.feature import SubagentsFeature
from countbot.triggers.feature import TriggersFeature
from countbot.web.access import is_loopback
from countbot.web.app import create_app
from countbot.web.config_watch import ConfigWatcher
from countbot.web.context import DaemonContext
from countbot.web.http_limits import bounded_head_protocol
from countbot.web.instance import AlreadyRunningError, InstanceLock, local_url
from countbot.web.notices import push_session_changes
from countbot.web.stop_deadline import arm as arm_stop_deadline

log = logging.getLogger(__name__)

EXIT_CONFIG = 2
EXIT_CONFLICT = 1
# Seconds uvicorn waits for connections to close once the turns are done.
CONNECTION_GRACE = 3.0
# Seconds the triggers get to deliver the answers of turns the gateway let finish.
TRIGGERS_SETTLE = 5.0
# Room above web.max_frame_bytes, so an oversized frame reaches us and gets an error frame back
# instead of the server closing the connection.
FRAME_HEADROOM = 1 << 20


class _DaemonServer(Server):
    """uvicorn without its own signal handling: the daemon decides how to stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def run_daemon(settings: Settings, listening: Callable[[], object] = lambda: None) -> int:
    """Run until a signal; returns the process exit status. `listening` is called once the
    daemon serves (a start that fails before it never calls it)."""
    web = settings.web
    if not is_loopback(web.host) and web.token is None:
        _say(
            f"countbot: refusing to listen on {web.host} without an access token. Anyone who "
            "can reach that address could use your assistant. Set web.token in the config "
            "file (a long random string), or keep web.host at 127.0.0.1."
        )
        return EXIT_CONFIG
    lock = InstanceLock(settings.data_dir)
    try:
        lock.acquire()
    except AlreadyRunningError as exc:
        _say(f"countbot: {exc}")
        return EXIT_CONFLICT
    except OSError as exc:  # the folder went away or turned read-only since the preflight
        _say(f"countbot: cannot use data_dir {settings.data_dir}: {exc.strerror or exc}")
        return EXIT_CONFIG
    try:
        try:
            listener = bind_listener(web.host, web.port)
        except OSError as exc:
            _say(_bind_failure(settings, exc))
            return EXIT_CONFLICT
        configure_logging(secret_masker(settings))
        with listener:
            asyncio.run(_serve(settings, lock, listener, listening))
        return 0
    except NewerSchemaError as exc:
        _say(f"countbot: {exc}")
        return EXIT_CONFIG
    finally:
        lock.release()


async def _serve(
    settings: Settings,
    lock: InstanceLock,
    listener: socket.socket,
    listening: Callable[[], object],
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with serve_daemon(settings, listener) as daemon:
            # The socket already listens: a client connecting now waits in its backlog.
            _announce(lock.publish(settings.web.host, daemon.port).url, settings)
            listening()
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({daemon.serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            arm_stop_deadline(settings.web.shutdown_grace)
            _say(_stopping_text(daemon.context.gateway.running_turns, settings.web.shutdown_grace))
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    _say("CountBot stopped.")


def _stopping_text(running: int, grace: float) -> str:
    if not running:
        return "CountBot is stopping…"
    turns = "1 running turn" if running == 1 else f"{running} running turns"
    return f"CountBot is stopping: letting {turns} finish (up to {grace:g} s, then cancelled)…"


@dataclass(slots=True)
class RunningDaemon:
    """A daemon serving on a bound socket (the CLI's, a test's or the benchmark's)."""

    context: DaemonContext
    port: int
    serving: asyncio.Task[None]


@contextlib.asynccontextmanager
async def serve_daemon(
    settings: Settings, listener: socket.socket, *, turns: TurnLoop | None = None
) -> AsyncIterator[RunningDaemon]:
    """Open the runtime and serve on `listener`; on exit stop turns, connections, then the store.

    `turns` runs every turn instead of the agents' loops (the benchmark times the daemon's own
    layers so).
    """
    subagent_feature, jobs, trigger_feature = SubagentsFeature(), JobsFeature(), TriggersFeature()
    browser = BrowserFeature()
    houses = await _open_houses(
        settings, [subagent_feature, jobs, trigger_feature, browser], [subagent_feature, jobs]
    )
    runtime = houses.main
    gateway = Gateway(
        houses if turns is None else OneLoop(turns),
        runtime.sessions,
        settings.gateway,
        approvals=runtime.approvals,
    )
    subagents = await subagent_feature.start(gateway)
    port = listener.getsockname()[1]
    web_url = local_url(settings.web.host, port)
    channels = ChannelManager(runtime, gateway, web_url=web_url, router=houses)
    await channels.start()  # returns at once; each channel connects in its own task
    scheduler = await start_scheduler(jobs, gateway)
    triggers = await trigger_feature.start(gateway)
    backups = BackupSchedule(settings)
    backups.start()
    context = DaemonContext(runtime, gateway, channels, scheduler, subagents, triggers, houses)
    push_session_changes(context)
    watcher = ConfigWatcher(context, settings.config_path) if settings.config_path else None
    if watcher is not None:
        await watcher.start()
    server = _DaemonServer(_uvicorn_config(context, port))
    preload = asyncio.create_task(_preload(context))
    trimming = asyncio.create_task(
        trim_when_quiet(lambda: (gateway.running_turns, gateway.turns_ended))
    )
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        yield RunningDaemon(context, port, serving)
    finally:
        if watcher is not None:
            await watcher.stop()
        await scheduler.stop()
        await backups.stop()
        await triggers.stop_taking()
        await subagents.close(settings.web.shutdown_grace)
        await gateway.close(settings.web.shutdown_grace)
        await triggers.close(TRIGGERS_SETTLE)  # the ended turns' answers, before channels stop
        await channels.stop()  # after the gateway, so chats still see their turn end
        await browser.close()  # after the turns: none is using it any more
        server.should_exit = True
        await asyncio.wait({serving})
        preload.cancel()
        trimming.cancel()
        await houses.close()
        await runtime.close()


async def _open_houses(
    settings: Settings, features: list[Feature], per_agent: list[Feature]
) -> Houses:
    """`main`'s runtime with the daemon's features, and every other agent's house opening in the
    background (`countbot/agents/`) with the tools of the `per_agent` ones (their cron jobs and
    subagents; the triggers and the browser are `main`'s). The tools, the agent loop and MCP
    are built at the first turn, so an idle daemon never imports them; configured MCP servers
    start with the daemon, and so build them now."""
    runtime = await open_runtime(settings, features, memory_vectors=True, defer_turns=True)
    if any(server.enabled for server in settings.mcp.servers.values()):
        await runtime.turn_parts()
    houses = Houses(runtime, per_agent)
    houses.start()
    return houses


async def _preload(daemon: DaemonContext) -> None:
    """Import litellm off the event loop, so the UI is served at once; skipped when no model is
    configured yet or the direct path serves the configured ones (litellm would cost seconds and
    much memory for nothing, and a switch to a litellm model in the settings imports it on that
    model's first call)."""
    settings = daemon.runtime.settings
    model, name = settings.model, effective_model(settings.model, settings.data_dir)
    if not name or takes_direct_path(model.provider_path, name, model.fallbacks, model.api_base):
        daemon.litellm_ready = True
        return
    try:
        await preload_litellm()
    except Exception:
        log.exception("loading litellm failed; turns will fail until this is fixed")
        return
    daemon.litellm_ready = True


def _uvicorn_config(daemon: DaemonContext, port: int) -> Config:
    log_as_uvicorn()
    return Config(
        create_app(daemon, port),
        lifespan="off",
        log_config=None,  # set by log_as_uvicorn, without logging.config
        log_level="warning",
        access_log=False,
        ws_max_size=daemon.runtime.settings.web.max_frame_bytes + FRAME_HEADROOM,
        http=bounded_head_protocol(daemon.runtime.settings.web.max_header_bytes),
        ws=WebSocketsSansIOProtocol,  # what "auto" picks, imported without importlib.metadata
        # Frames are small JSON; compressing each costs more CPU than the bytes are worth.
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=CONNECTION_GRACE,
    )


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket; binding before the loop starts turns a busy port into a message."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
        listener.set_inheritable(True)
    except OSError:
        listener.close()
        raise
    return listener


def _bind_failure(settings: Settings, exc: OSError) -> str:
    """Why the daemon cannot listen, naming the setting that changes it."""
    web = settings.web
    where = settings.config_path or "the config file"
    text = f"countbot: cannot listen on {web.host}:{web.port}: {exc.strerror or exc}."
    if exc.errno == errno.EADDRINUSE:
        return (
            f"{text} Another program (perhaps another CountBot) uses port {web.port}: stop it, "
            f"start with `countbot run --port <another>` or set web.port in {where}."
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{text} This machine has no address {web.host}: check web.host in {where}."
    return f"{text} Check web.host and web.port in {where}."


def _announce(url: str, settings: Settings) -> None:
    shown = url.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:")
    lines = [f"CountBot is running: open {shown}/ in your browser (Ctrl-C stops it)."]
    if settings.web.token is not None:
        lines.append("Sign in with the access token from web.token in your config file.")
    if embedded_default(settings.model, settings.data_dir):
        lines.append(EMBEDDED_NOTICE)
    elif not settings.model.name:
        lines.append("No model is configured yet: set it on the Settings page.")
    _say("\n".join(lines))


def _say(text: str) -> None:
    print(text, file=sys.stderr if text.startswith("countbot:") else sys.stdout, flush=True)
