"""Scheduled jobs (cron) and the heartbeat: the assistant acting without being asked."""
