"""The Feishu / Lark channel: lark-oapi's long connection in, its OpenAPI client out."""
