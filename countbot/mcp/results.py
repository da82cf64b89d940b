"""An MCP `CallToolResult` as a CountBot `ToolResult`, marked as external content.

Whatever a server says is untrusted text: the result is wrapped in an `<external>` marker the
system prompt's safety rules cover, so the model reads it as data, not instructions. Images go on
to vision models; other content kinds are named so the model knows something was left out.
"""

from __future__ import annotations

import json

from mcp_types import CallToolResult, EmbeddedResource, ImageContent, ResourceLink, TextContent

from countbot.common.authorship import external
from countbot.llm.types import ImagePart
from countbot.tools.base import ToolResult

# Base64 characters of one image passed on to the model (about 5 MiB of image).
MAX_IMAGE_CHARS = 7_000_000


def tool_result(source: str, result: CallToolResult) -> ToolResult:
    """`source` is `mcp:<server>/<tool>`, shown in the marker."""
    texts: list[str] = []
    images: list[ImagePart] = []
    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, ImageContent) and len(block.data) > MAX_IMAGE_CHARS:
            # Every later request of the session would carry it: refused, and said so.
            texts.append(f"[image not passed on: {len(block.data) * 3 // 4 >> 20} MiB is too big]")
        elif isinstance(block, ImageContent):
            images.append(ImagePart(block.mime_type, data=block.data))
            texts.append(f"[image {len(images)}: {block.mime_type}]")
        elif isinstance(block, ResourceLink):
            texts.append(f"[resource link: {block.uri}]")
        elif isinstance(block, EmbeddedResource):
            text = getattr(block.resource, "text", None)
            texts.append(text if isinstance(text, str) else f"[resource: {block.resource.uri}]")
        else:
            texts.append(f"[{block.type} content not shown]")
    if not texts and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    body = "\n".join(texts) or "(no content)"
    marked = external(source, body)
    if result.is_error:
        return ToolResult(f"Error: {marked}", "error", images=tuple(images))
    return ToolResult(marked, images=tuple(images))
