"""The shared pipeline every chat channel runs through.

Platform code reaches it only through `countbot.channels.door`.
"""
