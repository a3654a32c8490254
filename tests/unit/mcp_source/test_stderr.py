"""A stdio server's stderr: every line to tether's log, the last ones kept to name in an
error, a line of any length bounded."""

from __future__ import annotations

import asyncio
import logging
import sys

import pytest

from tether.mcp_source.stderr import KEPT, LINE_CHARS, StderrTail, said


async def written(tail: StderrTail, program: str) -> str:
    """Run ``program`` with the tail as its stderr, as the ``mcp`` client does."""
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", program, stderr=tail.file)
    tail.spawned()
    await child.wait()
    return await tail.tail()


async def test_every_line_is_logged_and_the_last_ones_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="tether.mcp_source.stderr")
    tail = StderrTail("db")

    last = await written(
        tail, "import sys\nfor i in range(30): print(f'line {i}', file=sys.stderr)"
    )

    assert last.splitlines() == [f"line {i}" for i in range(30 - KEPT, 30)]
    logged = [r.getMessage() for r in caplog.records]
    assert logged[0] == "MCP server db: line 0" and len(logged) == 30


async def test_a_line_without_end_is_cut_into_bounded_pieces() -> None:
    tail = StderrTail("db")
    last = await written(tail, f"import sys\nsys.stderr.write('x' * {LINE_CHARS * 3 + 5})")
    assert max(len(line) for line in last.splitlines()) <= LINE_CHARS
    assert sum(len(line) for line in last.splitlines()) == LINE_CHARS * 3 + 5


async def test_an_error_says_what_the_server_wrote_or_that_it_wrote_nothing() -> None:
    tail = StderrTail("db")
    assert await written(tail, "pass") == ""
    assert said("db", "") == "the MCP server 'db' wrote nothing on stderr"
    assert said("db", "boom").endswith("on stderr:\nboom")
