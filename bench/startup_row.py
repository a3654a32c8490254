"""Row 4: ``tether serve`` from spawn to the ``initialize`` result, against importing pygls."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.timing import Row, interleaved, ms, ratio

SERVER = [sys.executable, "-m", "tether", "serve"]
FLOOR = [sys.executable, "-c", "import pygls.lsp.server, lsprotocol.types"]


def _env(home: Path) -> dict[str, str]:
    """TETHER_HOME in the bench's state; bytecode cached in a folder of its own, for the
    server and the floor alike: every start but the first (left out) reads it, as every
    start of an installed tether does, whatever PYTHONDONTWRITEBYTECODE says here."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    env["TETHER_HOME"] = str(home)
    return env


async def _drain(stream: asyncio.StreamReader | None, tail: bytearray) -> None:
    """Read the server's stderr (its INFO log) so it never blocks; keep the end for errors."""
    while stream is not None and (chunk := await stream.read(65536)):
        tail += chunk
        del tail[:-4096]


async def row(workspace: Path, state: Path, reps: int) -> Row:
    env = _env(state / "server-home")
    uri = workspace.as_uri()
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        process_id=os.getpid(),
        root_uri=uri,
        workspace_folders=[types.WorkspaceFolder(uri=uri, name="stdlib")],
    )

    async def server() -> float:
        client = LanguageClient("tether-bench", "0")
        tail = bytearray()
        start = time.perf_counter()
        # cwd outside the workspace: `-m` puts the cwd first on sys.path, and the
        # workspace is a copy of the stdlib.
        await client.start_io(*SERVER, env=env, cwd=state)
        assert client._server is not None
        drain = asyncio.create_task(_drain(client._server.stderr, tail))
        try:
            async with asyncio.timeout(30):
                await client.initialize_async(params)
        except (TimeoutError, RuntimeError) as exc:
            raise RuntimeError(f"tether serve did not initialize: {tail.decode()}") from exc
        took = time.perf_counter() - start
        client.initialized(types.InitializedParams())
        async with asyncio.timeout(10):
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()  # type: ignore[no-untyped-call]
            await drain
        return took

    async def floor() -> float:
        start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(*FLOOR, env=env, cwd=state)
        if await proc.wait() != 0:
            raise RuntimeError("importing pygls failed")
        return time.perf_counter() - start

    what = "`tether serve`: spawn to `initialize` result"
    try:
        mine, theirs = await interleaved(server, floor, reps)
    except RuntimeError as exc:  # report it in the table; the other rows still stand
        last = str(exc).strip().splitlines()[-1]
        return Row(what, "failed", "", "", last[:160])
    note = (
        f"median of {reps} starts after a first; TETHER_HOME in a temp dir; bytecode cached; "
        "floor = python importing pygls"
    )
    return Row(what, ms(mine), ms(theirs), ratio(mine, theirs), note)
