"""Several assistants in one daemon: each agent's house, and which agent a message goes to."""
