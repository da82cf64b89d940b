"""The memory index: full-text and vectors over notes and past conversations, and auto-recall.

See docs/internals/memory_index.md; `index.MemoryIndex` is the entry point.
"""
