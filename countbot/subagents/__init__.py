"""Subagents: background tasks the model hands over with `spawn`, each a turn of its own loop.

`manager` spawns, queues and stops them; `turn` runs one's turn under the watchdog; `reports`
brings each ending to the session that spawned it; `loops` builds each one's AgentLoop; `prompt`
is its focused system prompt; `tools` are the `spawn` and `subagents` tools; `store` is their
SQLite table. The daemon's routes and the CLI talk to the manager (`web/api/subagents.py`,
`cli/subagents.py`).
"""
