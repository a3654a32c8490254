"""One MCP server's tool as a tether ``Tool``: named ``mcp__SERVER__TOOL``, its arguments
checked against the tool's own ``inputSchema``, and approval-requiring unless the person
trusts the server and the tool says it only reads (``readOnlyHint``).

Results become what the model reads: text content joined; images, audio and binary
resources named, never inlined; structured content as JSON text; ``isError`` a
``ToolError``. A call past the server's ``timeout_s`` is abandoned (the ``mcp`` client
sends MCP's cancellation) and answered with an error.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from typing import Any, ClassVar, Protocol

import jsonschema
import mcp.types as mt
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import RootModel, model_validator

from tether.config import McpHttpServer, McpServer, McpStdioServer
from tether.errors import ToolError
from tether.tools.base import Preview, RuleKey, ToolContext, quoted

SEPARATOR = "__"


def tool_name(server: str, tool: str) -> str:
    return f"mcp{SEPARATOR}{server}{SEPARATOR}{tool}"


def launch(settings: McpServer) -> str:
    """How the server runs, as a person reads it: its command line (and folder), or its URL."""
    if isinstance(settings, McpStdioServer):
        line = shlex.join([settings.command, *settings.args])
        return f"{line} in {settings.cwd}" if settings.cwd else line
    if isinstance(settings, McpHttpServer):
        return settings.url
    return "?"


class Connection(Protocol):
    """A running server's side of a call."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult: ...


class McpArguments(RootModel[dict[str, Any]]):
    """A call's arguments, passed through as the JSON object they are, once the tool's
    ``inputSchema`` accepts them (a subclass per tool carries its schema)."""

    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    # The schema checked once, when the tool is listed (checking it takes a millisecond
    # or more: every call paid it); or why it is not usable.
    validator: ClassVar[Validator | None] = None
    invalid: ClassVar[str] = "no input schema"

    @model_validator(mode="after")
    def _schema(self) -> McpArguments:
        if self.validator is None:
            raise ValueError(f"the server's input schema is invalid: {self.invalid}")
        exc = best_match(self.validator.iter_errors(self.root))
        if exc is not None:
            where = "/".join(str(p) for p in exc.absolute_path) or "the arguments"
            raise ValueError(f"{where}: {exc.message}")
        return self

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return cls.input_schema


def arguments_model(name: str, schema: dict[str, Any]) -> type[McpArguments]:
    schema = {"type": "object", "properties": {}, **schema}
    kind = validator_for(schema)
    checked: dict[str, Any] = {"input_schema": schema}
    try:
        kind.check_schema(schema)
        checked["validator"] = kind(schema)
    except jsonschema.SchemaError as exc:
        checked["invalid"] = exc.message
    return type(f"Arguments_{name}", (McpArguments,), checked)


class McpTool:
    """A tool of an MCP server, gated like a command: the person sees the server, the tool
    and the arguments; "Allow always" remembers this one tool."""

    def __init__(
        self, server: str, settings: McpServer, spec: mt.Tool, connection: Connection
    ) -> None:
        self.server = server
        self.settings = settings
        self.spec = spec
        self.connection = connection
        self.name = tool_name(server, spec.name)
        said = spec.description or spec.title or spec.name
        self.description = f"{said} (from the MCP server {server!r})"
        self.params = arguments_model(self.name, dict(spec.input_schema))
        hints = spec.annotations
        # An untrusted server's annotations never skip a dialog.
        self.reads = settings.trusted and hints is not None and hints.read_only_hint is True

    def read_only(self, params: McpArguments, ctx: ToolContext) -> bool:
        return self.reads

    def summary(self, params: McpArguments, ctx: ToolContext) -> str:
        return f"{self.spec.name} on MCP server {self.server} {quoted(_json(params.root))}"

    async def preview(self, params: McpArguments, ctx: ToolContext, budget: int) -> Preview:
        head = f"MCP server {self.server!r}, tool {self.spec.name!r}, with the arguments:\n"
        arguments = json.dumps(params.root, indent=2, ensure_ascii=False)
        room = max(budget - len(head) - 120, 200)
        if len(arguments) <= room:
            return Preview(text=head + arguments)
        half = room // 2
        middle = f"\n[… {len(arguments) - 2 * half:,} characters not shown …]\n"
        return Preview(text=head + arguments[:half] + middle + arguments[-half:], whole=False)

    def rule_key(self, params: McpArguments, ctx: ToolContext) -> RuleKey | None:
        # The server as it runs is part of the key: a rule for one session's `ed` never
        # covers another's `ed` that runs something else, nor an entry whose command changed.
        runs = launch(self.settings)
        return RuleKey(key=f"{self.name} {runs}", words=f"every call of {self.name} ({runs})")

    async def run(self, params: McpArguments, ctx: ToolContext) -> str:
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                result = await self.connection.call(self.spec.name, params.root)
        except TimeoutError:
            raise ToolError(
                f"{self.name} took longer than {self.settings.timeout_s:g} s "
                f"(the server's timeout_s) and was cancelled"
            ) from None
        return rendered(result)


def rendered(result: mt.CallToolResult) -> str:
    """What the model reads of a result; an error result raises ``ToolError`` with it."""
    parts = [_part(block) for block in result.content]
    structured = result.structured_content
    if structured is not None and not _told(structured, result.content):
        parts.append(_json(structured))
    text = "\n".join(parts)
    if result.is_error:
        raise ToolError(text or "the MCP server reported an error")
    return text


def _told(structured: dict[str, Any], content: list[mt.ContentBlock]) -> bool:
    """Whether a text block already says the structured content (servers send both: the
    JSON as text, or, wrapping a plain value as ``{"result": value}``, the value)."""
    texts = [block.text for block in content if isinstance(block, mt.TextContent)]
    wrapped = structured.get("result") if list(structured) == ["result"] else None
    for text in texts:
        if text == wrapped:
            return True
        try:
            if json.loads(text) in (structured, wrapped):
                return True
        except ValueError:
            continue
    return False


def _part(block: mt.ContentBlock) -> str:
    match block:
        case mt.TextContent():
            return block.text
        case mt.ImageContent() | mt.AudioContent():
            return (
                f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4:,} bytes, not shown]"
            )
        case mt.ResourceLink():
            return f"[resource link: {block.uri} ({block.name})]"
        case mt.EmbeddedResource():
            res = block.resource
            if isinstance(res, mt.TextResourceContents):
                return f"[resource {res.uri}]\n{res.text}"
            mime = res.mime_type or "binary"
            return f"[resource {res.uri}: {mime}, {len(res.blob) * 3 // 4:,} bytes, not shown]"
    return f"[{getattr(block, 'type', 'unknown')} content, not shown]"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
