"""Row 5: a turn's overhead: ``tether.run`` for a plain answer against the provider's own
streamed reply, both from the loopback provider stub, run in a process of its own
(``stub_process``), as a provider is: in the bench's process it shared the GIL with
both sides' readers. (Measured, 60 turns, twice: the stub here, 11.1 / 10.9 ms vs 6.2 /
5.2 ms direct; apart, 10.7 / 10.6 vs 4.5 / 4.4. The direct side gained the most.)"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from asyncio.subprocess import PIPE
from pathlib import Path

import httpx
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.timing import Row, interleaved, ms, ratio


async def _drain(stream: asyncio.StreamReader | None) -> None:
    while stream is not None and await stream.read(65536):
        pass


async def row(workspace: Path, state: Path, reps: int) -> Row:
    stub = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.stub_process", stdin=PIPE, stdout=PIPE
    )
    assert stub.stdin is not None and stub.stdout is not None
    url = (await stub.stdout.readline()).decode().strip()
    try:
        mine, theirs = await _measured(workspace, state, reps, url, stub.stdout)
    finally:
        stub.stdin.close()
        await stub.wait()
    what = "a plain-answer turn vs the provider's own reply"
    note = (
        f"overhead {ms(mine - theirs)} a turn: LSP round trip, session writes, request built "
        "from the store, streamed updates; same stub (a process of its own), same reply"
    )
    return Row(what, ms(mine), ms(theirs), ratio(mine, theirs), note)


async def _measured(
    workspace: Path, state: Path, reps: int, url: str, said: asyncio.StreamReader
) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env |= {"TETHER_HOME": str(state / "turn-home"), "TETHER_BASE_URL": url}
    env |= {"TETHER_MODEL": "bench", "TETHER_API_KEY": "sk-bench"}
    client = LanguageClient("tether-bench", "0")
    updates: list[object] = []

    indexed = asyncio.Event()

    @client.feature("tether/update")  # type: ignore[untyped-decorator]
    def on_update(params: object) -> None:  # an editor would render each
        updates.append(params)

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)  # type: ignore[untyped-decorator]
    def on_create(params: types.WorkDoneProgressCreateParams) -> None:
        pass

    @client.feature(types.PROGRESS)  # type: ignore[untyped-decorator]
    def on_progress(params: types.ProgressParams) -> None:
        value = params.value
        kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
        if str(params.token).startswith("tether-index-") and kind == "end":
            indexed.set()

    await client.start_io(sys.executable, "-m", "tether", "serve", env=env, cwd=state)
    assert client._server is not None
    drain = asyncio.create_task(_drain(client._server.stderr))
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True)
            ),
            root_uri=workspace.as_uri(),
        )
    )
    client.initialized(types.InitializedParams())
    # The steady state a person works in: the workspace's index built (it is kept
    # between starts), not its first build going on beside the turns.
    async with asyncio.timeout(300):
        await indexed.wait()
    body: dict[str, object] = {}

    async def turn() -> float:
        start = time.perf_counter()
        params = types.ExecuteCommandParams(command="tether.run", arguments=[{"prompt": "where?"}])
        result = await client.workspace_execute_command_async(params)
        took = time.perf_counter() - start
        assert result is not None and result["status"] == "done", result
        return took

    async with httpx.AsyncClient(timeout=30) as http:

        async def direct() -> float:
            start = time.perf_counter()
            async with http.stream("POST", f"{url}/chat/completions", json=body) as reply:
                async for _ in reply.aiter_lines():
                    pass
            return time.perf_counter() - start

        await turn()
        body.update(json.loads(await said.readline()))  # the request the direct side repeats
        mine, theirs = await interleaved(turn, direct, reps)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]
    await drain
    return mine, theirs
