"""Constrained tool calls: tools for models whose native tool calling cannot be trusted.

`reply` asks an OpenAI-compatible server for one JSON object (a call of one offered tool or an
answer) through `response_format`, and turns the reply back into ordinary chunks; `mode` says
when a model's calls go this way (`model.tool_calls`) and is the `ToolCallForm` the runtime hands
the direct provider, so `llm/` never imports this package.
"""
