"""The email channel: IMAP (IDLE, or polling) in, SMTP out; a mail thread is a conversation."""
