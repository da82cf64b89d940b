"""The gateway: one per daemon; routes every turn through per-session lanes and fans out events."""
