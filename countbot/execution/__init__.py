"""Running code: the `exec` tool, its bubblewrap sandbox and the command tripwire in front.

`shell` is the tool (and exec's policy of when to ask the user), `sandbox` builds the bwrap
command line and probes once whether it works (`pids_cgroup` gives a root daemon its process
limit), `shell_guard` is the tripwire and `shell_words` splits a command into simple commands
for it. The runtime wires the tool in every runtime (`runtime/builtin_tools.py`) and hands the
same probed sandbox's launcher to MCP's stdio servers, so `mcp/` never imports this package.
"""
