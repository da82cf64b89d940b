"""The Telegram channel: long polling with python-telegram-bot, inside the daemon's event loop."""
