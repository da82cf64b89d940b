"""Chat channels: platform adapters that turn updates into gateway messages and render turns."""
