"""What every layer shares: who wrote a text, what a model call cost, masked secrets, logging,
cooperative steps, and the JSON-lines child process."""
