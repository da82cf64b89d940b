"""MCP tool names and schemas made acceptable to the model providers, or refused with a reason."""

from __future__ import annotations

from countbot.mcp.schema import repaired_schema, tool_name


def test_names_join_server_and_tool_with_only_allowed_characters() -> None:
    assert tool_name("notes", "search") == "notes__search"
    assert tool_name("web", "fetch.page v2") == "web__fetch_page_v2"


def test_a_schema_without_type_or_properties_is_repaired() -> None:
    fixed, problem = repaired_schema({"required": "q"})
    assert problem == "" and fixed == {"type": "object", "properties": {}}


def test_a_valid_schema_is_kept_as_it_is() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert repaired_schema(schema) == (schema, "")


def test_schemas_that_cannot_be_repaired_say_why() -> None:
    assert repaired_schema(["not", "a", "schema"]) == (
        None,
        "its input schema is not a JSON object",
    )
    assert "not 'object'" in repaired_schema({"type": "string"})[1]
    fixed, problem = repaired_schema({"type": "object", "properties": {"q": {"type": 5}}})
    assert fixed is None and problem.startswith("its input schema is invalid")
