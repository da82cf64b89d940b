"""Personas: who the assistant is, read from preset files (`personas/` at the repository root).

Files on disk like skills (`countbot/skills/`), read by the agent's prompt, the runtime's
preflight and the Settings page; the turn itself is none of their business.
"""
