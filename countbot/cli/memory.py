"""`countbot memory rebuild`: index every note and past conversation again.

With a daemon running, the daemon does it (it owns the index); otherwise the index is rebuilt
here, vectors included. Imports are deferred so `countbot` itself starts fast.
"""

from __future__ import annotations

import asyncio
import contextlib

import click

from countbot.cli.common import config_option, fail, run_async, settings_or_exit
from countbot.config.settings import Settings

# A rebuild of a large index (and its vectors) takes a while; the daemon answers when done.
TIMEOUT = 600.0


@click.group()
def memory() -> None:
    """The memory index over notes and past conversations."""


@memory.command("rebuild")
@config_option
def rebuild(config_path: str | None) -> None:
    """Rebuild the memory index from MEMORY.md, USER.md, memory/*.md and the stored chats."""
    settings = settings_or_exit(config_path, require_model=False)
    status = run_async(lambda: _rebuild(settings))
    vectors = f", {status['vectors']} with vectors" if status.get("model") else ""
    click.echo(f"Memory index rebuilt: {status['entries']} entries{vectors}.")


async def _rebuild(settings: Settings) -> dict:
    from countbot.web.instance import read_daemon_info

    info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
    if info is not None:
        return await _via_daemon(settings, info.local_url())
    return await _here(settings)


async def _via_daemon(settings: Settings, base_url: str) -> dict:
    import httpx

    from countbot.cli.daemon_client import auth_headers, error_text

    async with httpx.AsyncClient(trust_env=False, timeout=TIMEOUT) as client:
        try:
            response = await client.post(
                f"{base_url}/api/memory/index/rebuild", headers=auth_headers(settings)
            )
        except httpx.TransportError as exc:
            fail(f"the daemon does not answer: {exc}", 1)
    if response.status_code != 200:
        fail(f"the daemon answered {response.status_code}: {error_text(response)}", 1)
    return response.json()


async def _here(settings: Settings) -> dict:
    from countbot.memory_index.assembly import INDEX_FILE, embedder_for
    from countbot.memory_index.index import MemoryIndex
    from countbot.store.database import Database
    from countbot.store.sessions import SessionStore

    db = await Database.open(settings.data_dir / "countbot.db")
    embedder = embedder_for(settings.memory)
    index = await MemoryIndex.open(
        settings.data_dir / INDEX_FILE, settings.workspace, SessionStore(db), embedder
    )
    try:
        await index.rebuild()
        if embedder is not None:
            index.start()
            # An embedder that cannot work leaves the index full-text only; say so, not hang.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(index.vectors_ready(), TIMEOUT)
        return await index.status()
    finally:
        await index.close()
        await db.close()
