"""The workspace index over ACP: built in the background for each workspace, watched by
tether itself (ACP clients watch no files for an agent), so ``index-symbols`` answers
and a file written behind the client's back is found."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.e2e.acp.conftest import Acp, StartAcp
from tests.support.provider_stub import ProviderStub, text, tool_calls


async def answer_of(
    acp: Acp, stub: ProviderStub, session: str, call: tuple[str, dict[str, Any]]
) -> str:
    stub.script(tool_calls(call), text("ok"))
    assert await acp.prompt(session, "look it up") == "end_turn"
    return str([m for m in stub.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"])


async def eventually(
    acp: Acp, stub: ProviderStub, session: str, call: tuple[str, dict[str, Any]], wanted: str
) -> str:
    """The tool's answer once it holds ``wanted`` (the index builds, the watch tells)."""
    async with asyncio.timeout(30):
        while wanted not in (answer := await answer_of(acp, stub, session, call)):
            await asyncio.sleep(0.2)
    return answer


async def test_index_symbols_finds_a_definition_and_follows_changes_on_disk(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "shapes.py").write_text("class RoundedRectangle:\n    pass\n")
    acp = await start_acp()
    session = await acp.new()
    find = ("index-symbols", {"query": "RoundedRect"})
    answer = await eventually(acp, stub, session, find, "shapes.py")
    assert "shapes.py:1: class RoundedRectangle" in answer

    # Written behind the client's back: tether's own watch tells the index.
    (workspace / "lines.py").write_text("def draw_dashed_line():\n    pass\n")
    answer = await eventually(
        acp, stub, session, ("index-symbols", {"query": "draw_dashed"}), "lines.py"
    )
    assert "lines.py:1: function draw_dashed_line" in answer
