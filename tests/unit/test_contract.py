"""The contract's schema: checked in as generated, naming every command the server
registers, and describing what the server really sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel

from tether.agent.events import (
    ApprovalUpdate,
    StatusUpdate,
    TextUpdate,
    ToolCallUpdate,
    ToolResultUpdate,
)
from tether.contract import COMMANDS, SCHEMA_FILE, UPDATES, render, schema
from tether.history import History, HistoryAssistant, HistoryTool, HistoryUser, WireCall
from tether.lsp.arguments import (
    Cancelled,
    NoArgument,
    Planned,
    Scheduled,
    Sessions,
    SessionSummary,
    TaskList,
    Unscheduled,
)
from tether.lsp.errors import json_rpc_errors
from tether.lsp.server import create_server
from tether.lsp.updates import UPDATE, LspUpdates
from tether.models import Compaction, PendingCall, Stats, Task, TurnResult, TurnUsage

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = f".venv/bin/python -m tether.contract > {SCHEMA_FILE}"

PENDING = PendingCall(call_id="c1", tool="patch", arguments={"path": "a.py"}, summary="a.py")
RESULTS: list[BaseModel] = [
    TurnResult(session="s", status="done", answer="hi"),
    TurnResult(session="s", status="awaiting_approval", pending=[PENDING]),
    TurnResult(session="s", status="error", error="no model: set TETHER_MODEL"),
    History(
        messages=[
            HistoryUser(content="list"),
            HistoryAssistant(content="", tool_calls=[WireCall(id="c0", name="x", arguments="{")]),
            HistoryAssistant(content="done"),
            HistoryTool(
                content="a", call_id="c0", tool="x", status="ok", started_at=None, ended_at=None
            ),
        ],
        pending=[PENDING],
        stats=Stats(tool_calls=1, input_tokens=3, turns=[TurnUsage(requests=1)]),
        compactions=[Compaction(before=2, summary="earlier", created="2026-01-01T00:00:00Z")],
    ),
    Cancelled(cancelled=True),
    Sessions(sessions=[SessionSummary(id="s", title="t", status="idle", updated="now")]),
    Planned(path="/w/new.py", before=None, after="x = 1\n"),
    Planned(path="/w/a.py", before="x = 0\n", after="x = 1\n"),
    Scheduled(task="t1"),
    Unscheduled(removed=True),
    TaskList(
        tasks=[
            Task(
                id="t1",
                prompt="p",
                every="1d",
                session=None,
                next_run="later",
                last_run=None,
                last_status=None,
                last_session=None,
            ),
            Task(
                id="t2",
                prompt="p",
                every="1d",
                session="s",
                next_run="later",
                last_run="before",
                last_status="done",
                last_session="s",
            ),
        ]
    ),
]
UPDATE_SAMPLES: list[BaseModel] = [
    TextUpdate(session="s", text="Hel"),
    ToolCallUpdate(session="s", call_id="c", tool="x", arguments="{", summary="x"),
    ToolResultUpdate(session="s", call_id="c", tool="x", status="denied", content="no"),
    ToolResultUpdate(
        session="s", call_id="c", tool="x", status="ok", content="", started_at="a", ended_at="b"
    ),
    ApprovalUpdate(session="s", call_id="c", tool="x", summary="x", decision="pending"),
    StatusUpdate(session="s", status="running"),
    StatusUpdate(session="s", status="error", detail="provider: 401"),
]


def test_the_checked_in_schema_is_what_the_code_generates() -> None:
    checked_in = (ROOT / SCHEMA_FILE).read_text(encoding="utf-8")
    assert checked_in == render(), f"{SCHEMA_FILE} is stale: regenerate it with `{REGENERATE}`"


def test_every_command_the_server_registers_is_in_the_contract() -> None:
    registered = set(create_server().protocol.fm.commands)
    assert registered == set(COMMANDS)


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: type(r).__name__)
async def test_a_result_as_the_server_answers_it_fits_the_schema(result: BaseModel) -> None:
    async def handler(ls: Any, arg: NoArgument) -> BaseModel:
        return result

    sent = await json_rpc_errors(NoArgument)(handler)(None, {})  # the server's own dump
    command = next(name for name, (_, r) in COMMANDS.items() if isinstance(result, r))
    contract = schema()
    fits(
        contract,
        contract["properties"]["commands"]["properties"][command]["properties"]["result"],
        sent,
    )


@pytest.mark.parametrize("update", UPDATE_SAMPLES, ids=lambda u: type(u).__name__)
def test_an_update_as_the_server_sends_it_fits_the_schema(update: BaseModel) -> None:
    sent: list[tuple[str, Any]] = []

    class Server:  # LspUpdates notifies through ls.protocol, and nothing else here
        protocol = type("Protocol", (), {"notify": lambda _, m, p: sent.append((m, p))})()

    assert isinstance(update, UPDATES)
    LspUpdates(cast(Any, Server()), "s").send(cast(Any, update))
    ((method, params),) = sent
    contract = schema()
    fits(contract, contract["properties"]["notifications"]["properties"][method], params)
    assert method == UPDATE


def test_the_schema_is_json_with_sorted_keys_and_a_final_newline() -> None:
    text = render()
    assert text.endswith("}\n") and json.loads(text) == schema()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


def fits(root: dict[str, Any], node: dict[str, Any], value: Any, at: str = "$") -> None:
    """Assert that ``value`` fits the schema ``node``: the subset of JSON Schema that the
    contract uses ($ref, oneOf/anyOf, type, const, enum, properties, required,
    additionalProperties, items)."""
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        fits(root, root["$defs"][name], value, at)
        return
    for key in ("oneOf", "anyOf"):
        if key in node:
            matches = sum(_fits(root, option, value) for option in node[key])
            assert matches == 1 if key == "oneOf" else matches >= 1, f"{at}: {value!r} ({key})"
            return
    kinds = {
        "object": dict,
        "array": list,
        "string": str,
        "integer": int,
        "number": int | float,
        "boolean": bool,
        "null": type(None),
    }
    if "type" in node:
        assert isinstance(value, kinds[node["type"]]), f"{at}: {value!r} is not {node['type']}"
    if "const" in node:
        assert value == node["const"], f"{at}: {value!r} is not {node['const']!r}"
    if "enum" in node:
        assert value in node["enum"], f"{at}: {value!r} is not one of {node['enum']}"
    if isinstance(value, dict):
        properties = node.get("properties", {})
        missing = set(node.get("required", [])) - set(value)
        assert not missing, f"{at}: {sorted(missing)} missing from {value!r}"
        if node.get("additionalProperties") is False or "properties" in node:
            extra = set(value) - set(properties)
            assert not extra, f"{at}: {sorted(extra)} not in the schema"
        for key, item in value.items():
            if key in properties:
                fits(root, properties[key], item, f"{at}.{key}")
    if isinstance(value, list) and "items" in node:
        for index, item in enumerate(value):
            fits(root, node["items"], item, f"{at}[{index}]")


def _fits(root: dict[str, Any], node: dict[str, Any], value: Any) -> bool:
    try:
        fits(root, node, value)
    except AssertionError:
        return False
    return True
