"""The memory index: full-text and vectors over notes and past conversations, and auto-recall.

See docs/architecture.md ("The memory index"); `index.MemoryIndex` is the entry point.
"""
