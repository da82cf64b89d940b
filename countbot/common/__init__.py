"""What every layer shares: who wrote a text, masked secrets, logging, cooperative steps, and
the JSON-lines child process."""
