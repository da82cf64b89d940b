"""The WeCom (企业微信) AI bot channel: wecom-aibot-python-sdk's long connection."""
