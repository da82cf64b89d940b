"""MCP servers' tools as CountBot tools: connections, schema repair, results, import."""
