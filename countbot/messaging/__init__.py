"""Messaging: the `message` tool, with which the assistant sends text and files to a chat.

It belongs to the chat channels, but they are a surface the runtime may not import: the tool
sees them through its `Deliverer` port, which the runtime makes from the delivery router and the
owner's chats (allow-lists, pairings, sessions), and registers for every turn.
"""
