"""`countbot memory search|rebuild`: find in, or index again, every note and past conversation.

With a daemon running, the daemon does it (it owns the index); otherwise the index is opened
here, vectors included. Imports are deferred so `countbot` itself starts fast.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import click

from countbot.cli.common import config_option, fail, run_async, settings_or_exit
from countbot.config.settings import Settings

if TYPE_CHECKING:
    from countbot.memory_index.index import MemoryIndex

# A rebuild of a large index (and its vectors) takes a while; the daemon answers when done.
TIMEOUT = 600.0


@click.group()
def memory() -> None:
    """The memory index over notes and past conversations."""


@memory.command("search")
@config_option
@click.argument("query")
@click.option(
    "--scope",
    type=click.Choice(["all", "notes", "conversations"]),
    default="all",
    show_default=True,
    help="where to look",
)
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
def search(config_path: str | None, query: str, scope: str, limit: int) -> None:
    """Search notes and past conversations as the assistant's memory_search does."""
    if not query.strip():
        fail("give something to search for", 2)
    settings = settings_or_exit(config_path, require_model=False)
    params = {"q": query, "scope": scope, "limit": str(limit)}
    found = run_async(lambda: _search(settings, params))
    hits = found["hits"]
    if not hits:
        click.echo(f"Nothing found for {query!r}.")
        return
    for hit in hits:
        others = f"  [written by {hit['written_by']}]" if hit.get("written_by") else ""
        click.echo(hit["citation"] + others)
        click.echo("  " + " ".join(str(hit["text"]).split())[:400])


@memory.command("rebuild")
@config_option
def rebuild(config_path: str | None) -> None:
    """Rebuild the memory index from MEMORY.md, USER.md, memory/*.md and the stored chats."""
    settings = settings_or_exit(config_path, require_model=False)
    status = run_async(lambda: _rebuild(settings))
    vectors = f", {status['vectors']} with vectors" if status.get("model") else ""
    click.echo(f"Memory index rebuilt: {status['entries']} entries{vectors}.")


async def _search(settings: Settings, params: dict[str, str]) -> dict[str, Any]:
    async def here(index: MemoryIndex) -> dict[str, Any]:
        from countbot.memory.cited import SCOPES

        if index.vectors is not None:  # the query's vector needs the worker
            index.start()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(index.vectors_ready(), TIMEOUT)
        limit = int(params["limit"])
        hits = await index.search(params["q"], limit=limit, kinds=SCOPES[params["scope"]])
        return {"hits": [hit.as_dict() for hit in hits]}

    return await _by_daemon_or_here(settings, "GET", "/api/memory/search", params, here)


async def _rebuild(settings: Settings) -> dict[str, Any]:
    async def here(index: MemoryIndex) -> dict[str, Any]:
        await index.rebuild()
        if index.vectors is not None:
            index.start()
            # An embedder that cannot work leaves the index full-text only; say so, not hang.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(index.vectors_ready(), TIMEOUT)
        return await index.status()

    return await _by_daemon_or_here(settings, "POST", "/api/memory/index/rebuild", None, here)


async def _by_daemon_or_here(
    settings: Settings,
    method: str,
    path: str,
    params: dict[str, str] | None,
    here: Callable[[MemoryIndex], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """The running daemon's answer (it owns the index), else `here` on the index opened here."""
    from countbot.web.instance import read_daemon_info

    info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
    if info is not None:
        return await _via_daemon(settings, method, f"{info.local_url()}{path}", params)
    async with _index_here(settings) as index:
        return await here(index)


async def _via_daemon(
    settings: Settings, method: str, url: str, params: dict[str, str] | None
) -> dict[str, Any]:
    import httpx

    from countbot.cli.daemon_client import auth_headers, error_text

    async with httpx.AsyncClient(trust_env=False, timeout=TIMEOUT) as client:
        try:
            response = await client.request(
                method, url, params=params, headers=auth_headers(settings)
            )
        except httpx.TransportError as exc:
            fail(f"the daemon does not answer: {exc}", 1)
    if response.status_code != 200:
        fail(f"the daemon answered {response.status_code}: {error_text(response)}", 1)
    return response.json()


@contextlib.asynccontextmanager
async def _index_here(settings: Settings) -> AsyncIterator[MemoryIndex]:
    from countbot.memory_index.assembly import INDEX_FILE, embedder_for, kept_out_for
    from countbot.memory_index.index import MemoryIndex
    from countbot.store.database import Database
    from countbot.store.sessions import SessionStore

    db = await Database.open(settings.data_dir / "countbot.db")
    embedder = embedder_for(settings.memory)
    index = await MemoryIndex.open(
        settings.data_dir / INDEX_FILE,
        settings.workspace,
        SessionStore(db),
        embedder,
        kept_out_for(settings.memory),
    )
    try:
        yield index
    finally:
        await index.close()
        await db.close()
