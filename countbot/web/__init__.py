"""The web surface: REST + WebSocket + the static UI, served by the daemon itself."""
