"""The Slack channel: slack-sdk's Socket Mode in (no public URL), the Web API out."""
