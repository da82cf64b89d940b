"""The browser feature: a system Chromium the daemon owns, driven over the DevTools Protocol
through a pipe, and the `browser` tool that reports honestly what each action did."""
