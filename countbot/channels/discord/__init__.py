"""The Discord channel: discord.py's gateway WebSocket in, its REST API out."""
