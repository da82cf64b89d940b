"""The context pipeline, one module a step: what a request holds and how it fits the window.

`prompt` builds the system prompt and the per-turn context; `tokens` counts entries; `fit`
projects history into a request's budget; `flush` and `summary` move overflowing history into
MEMORY.md; `metered` reports those side calls' usage; `keeper` runs the steps for the loop.
"""
