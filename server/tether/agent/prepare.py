"""A reply's calls checked against their tools, once: each is ``Prepared`` to run, or
``Invalid`` with the reason the model will read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic

from pydantic import ValidationError

from tether.errors import ToolError, problems
from tether.models import ArgumentsTooBig, PendingCall, ToolCall, parse_arguments, shortened
from tether.tools.base import P, Tool, ToolContext

PENDING_ARGUMENT_CHARS = 16_000  # of each string argument a waiting call is listed with


@dataclass(frozen=True)
class Prepared(Generic[P]):
    idx: int
    call: ToolCall
    key: str
    tool: Tool[P]
    params: P
    read_only: bool

    def pending(self, ctx: ToolContext) -> PendingCall:
        """The call as a person is asked about it."""
        return PendingCall(
            call_id=self.call.id,
            tool=self.call.name,
            arguments=shortened(self.call.parsed_arguments(), PENDING_ARGUMENT_CHARS),
            summary=self.tool.summary(self.params, ctx),
        )


@dataclass(frozen=True)
class Invalid:
    idx: int
    call: ToolCall
    key: str
    reason: str


Call = Prepared[Any] | Invalid


def prepare(tools: Mapping[str, Tool[Any]], ctx: ToolContext, idx: int, call: ToolCall) -> Call:
    """A call checked against its tool: unknown, malformed and invalid calls say why."""
    key = call_key(call)
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools))
        return Invalid(idx, call, key, f"unknown tool {call.name!r}; the tools are: {known}")
    try:
        arguments = parse_arguments(call.arguments)
    except ArgumentsTooBig as exc:
        return Invalid(idx, call, key, f"{exc}; send smaller arguments")
    except ValueError as exc:
        return Invalid(
            idx, call, key, f"the arguments are not valid JSON ({exc}); send a JSON object"
        )
    try:
        params = tool.params.model_validate(arguments)
    except ValidationError as exc:
        return Invalid(idx, call, key, f"invalid arguments for {call.name}: {problems(exc)}")
    try:
        read_only = tool.read_only(params, ctx)
    except ToolError as exc:
        return Invalid(idx, call, key, str(exc))
    return Prepared(idx, call, key, tool, params, read_only)


def summary(c: Call, ctx: ToolContext) -> str:
    """One line for the person: the tool's own words, or the tool's name for an invalid call."""
    return c.tool.summary(c.params, ctx) if isinstance(c, Prepared) else c.call.name


def call_key(call: ToolCall) -> str:
    """Identity for duplicates and the repeat guard: same tool, same arguments."""
    try:
        arguments = json.dumps(parse_arguments(call.arguments), sort_keys=True)
    except ValueError:
        arguments = call.arguments
    return f"{call.name}\x00{arguments}"
