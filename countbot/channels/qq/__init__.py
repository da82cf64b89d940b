"""The QQ channel: OneBot v11 over a reverse WebSocket that a QQ client (NapCat) connects to."""
