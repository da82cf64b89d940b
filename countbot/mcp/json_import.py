"""`countbot mcp import`: an `mcpServers` JSON file from another MCP host, as `mcp.servers`.

Claude Desktop, Cursor, Windsurf and others share one shape (`{"mcpServers": {name: {command,
args, env} | {url, headers}}}`; VS Code calls the key `servers`). A server CountBot cannot run
(an SSE-only one) is left out with the reason, never half-imported.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from countbot.config import yaml_text
from countbot.config.errors import ConfigError
from countbot.config.loader import save_settings_patch, write_config_text
from countbot.config.problems import explained
from countbot.config.settings import McpServerSettings, McpSettings
from countbot.config.structs import Invalid, validate

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9-]+")
# `servers: {}` (or empty) right under a top-level `mcp:`, with its comment, up to the line end.
_EMPTY_SERVERS = re.compile(
    r"(?<=^mcp:\n)( +)servers:[ \t]*(?:\{\}|null|~)?[ \t]*(?:#.*)?\n?", re.MULTILINE
)


def servers_from_json(text: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The servers as `mcp.servers` entries, and a note for each one left out."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc}") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError('no "mcpServers" (or "servers") object in the file')
    imported: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for raw_name, spec in servers.items():
        name = _BAD_NAME_CHARS.sub("-", str(raw_name)).strip("-")[:30] or "server"
        entry, problem = _entry(spec)
        if entry is None:
            notes.append(f"{raw_name}: left out, {problem}")
            continue
        if name != raw_name:
            notes.append(f"{raw_name}: imported as {name!r} (tool names allow - and letters)")
        imported[name] = entry
    return imported, notes


def _entry(spec: Any) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(spec, dict):
        return None, "not an object"
    kind = str(spec.get("type") or spec.get("transport") or "")
    entry: dict[str, Any] = {}
    if spec.get("command"):
        entry["command"] = str(spec["command"])
        if spec.get("args"):
            entry["args"] = [str(arg) for arg in spec["args"]]
        if spec.get("env"):
            entry["env"] = {str(k): str(v) for k, v in spec["env"].items()}
    elif spec.get("url") or spec.get("serverUrl"):
        if kind == "sse":
            return None, "it uses the old SSE transport; CountBot speaks streamable HTTP"
        entry["url"] = str(spec.get("url") or spec.get("serverUrl"))
        if spec.get("headers"):
            entry["headers"] = {str(k): str(v) for k, v in spec["headers"].items()}
    else:
        return None, "it has neither a command nor a url"
    if spec.get("disabled") is True:
        entry["enabled"] = False
    try:
        validate(McpServerSettings, entry)
    except Invalid as exc:
        return None, "; ".join(explained(exc))
    return entry, ""


def write_servers(config_path: Path, servers: dict[str, dict[str, Any]]) -> None:
    """Add (or replace) the servers in the config file, keeping its comments where possible.

    A file without an `mcp` section gets one appended as text; otherwise the settings patch
    writes them (in place when it can).
    """
    try:
        validate(McpSettings, {"servers": servers}, loc=("mcp",))
    except Invalid as exc:
        raise ConfigError("; ".join(explained(exc)), explained(exc)) from None
    text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    data = yaml_text.parse(text).data if text.strip() else {}
    if not isinstance(data, dict) or "mcp" not in data:
        block = yaml.safe_dump({"mcp": {"servers": servers}}, sort_keys=False, allow_unicode=True)
        separator = "" if not text or text.endswith("\n") else "\n"
        write_config_text(config_path, f"{text}{separator}\n{block}" if text else block)
        return
    empty = _EMPTY_SERVERS.search(text)
    if empty is not None and not (data.get("mcp") or {}).get("servers"):
        # The shipped file's `servers: {}`: replaced by the block, every comment kept.
        block = yaml.safe_dump({"servers": servers}, sort_keys=False, allow_unicode=True)
        indented = "".join(f"{empty.group(1)}{line}\n" for line in block.splitlines())
        write_config_text(config_path, text[: empty.start()] + indented + text[empty.end() :])
        return
    save_settings_patch(config_path, {"mcp": {"servers": servers}})
