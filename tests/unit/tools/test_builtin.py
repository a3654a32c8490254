"""The tools the model is given (``tether.tools.builtin.builtin_tools``)."""

from __future__ import annotations

from tether.tools.builtin import builtin_tools


def test_builtin_tools_are_the_contracts_tools_in_its_order() -> None:
    assert [tool.name for tool in builtin_tools()] == [
        "fs-read",
        "fs-list",
        "fs-find",
        "index-grep",
        "index-symbols",
        "outline",
        "git-status",
        "git-diff",
        "git-head",
        "command",
        "patch",
    ]


def test_every_tool_forbids_unknown_arguments_and_describes_its_fields() -> None:
    for tool in builtin_tools():
        schema = tool.params.model_json_schema()
        assert schema.get("additionalProperties") is False, tool.name
        for field, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{tool.name}.{field}"
