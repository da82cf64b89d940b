"""Answers as Feishu interactive cards: the one message type Feishu lets a bot update in place.

Card Markdown knows bold, italics, strikethrough, links, lists and code, but no headings (they
become bold lines) and it reads `<at ...>` and `<font>` tags: `<` and `>` outside code are
escaped, so an answer can never mention everyone or restyle itself.
"""

from __future__ import annotations

from typing import Any

from countbot.channels.door import MarkupRules, escape_entities, rewrite

# Code stays as written, fences and backticks included (cards render it).
_CARD = MarkupRules(
    code_block=lambda m: m.group(0),
    inline_code=lambda code: f"`{code}`",
    escape=escape_entities,
    heading=lambda heading: f"**{heading}**",
)


def markdown_to_card_markdown(text: str) -> str:
    return rewrite(text, _CARD)


def card(text: str, *, markdown: bool) -> dict[str, Any]:
    """A card showing `text`, updatable later (`update_multi`: everyone sees the update)."""
    element: dict[str, Any] = (
        {"tag": "markdown", "content": markdown_to_card_markdown(text)}
        if markdown
        else {"tag": "div", "text": {"tag": "plain_text", "content": text}}
    )
    return {"config": {"wide_screen_mode": True, "update_multi": True}, "elements": [element]}


def card_text(content: dict[str, Any]) -> str:
    """What a card shows, as text (for tests and logs)."""
    parts = []
    for element in content.get("elements", []):
        if element.get("tag") == "markdown":
            parts.append(element.get("content", ""))
        elif element.get("tag") == "div":
            parts.append(element.get("text", {}).get("content", ""))
    return "\n".join(parts)
