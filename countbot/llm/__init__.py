"""The model-access layer: provider-neutral types, the provider protocol, and litellm behind it.

Import from the submodules; this package stays empty so importing `countbot.llm.types` costs
nothing (the CLI talking to a running daemon must start fast).
"""
