"""Row 5: a turn's overhead: ``tether.run`` for a plain answer against the provider's own
streamed reply, both from the loopback provider stub."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import httpx
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from tests.support.provider_stub import ProviderStub, text

from bench.timing import Row, interleaved, ms, ratio

ANSWER = "The configuration is parsed in config.py, by Settings.load. " * 4


async def _drain(stream: asyncio.StreamReader | None) -> None:
    while stream is not None and await stream.read(65536):
        pass


async def row(workspace: Path, state: Path, reps: int) -> Row:
    with ProviderStub() as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
        env |= {"TETHER_HOME": str(state / "turn-home"), "TETHER_BASE_URL": stub.url}
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
            stub.script(text(ANSWER))
            start = time.perf_counter()
            params = types.ExecuteCommandParams(
                command="tether.run", arguments=[{"prompt": "where?"}]
            )
            result = await client.workspace_execute_command_async(params)
            took = time.perf_counter() - start
            assert result is not None and result["status"] == "done", result
            body.update(stub.requests[-1])
            return took

        async with httpx.AsyncClient(timeout=30) as http:

            async def direct() -> float:
                stub.script(text(ANSWER))
                start = time.perf_counter()
                async with http.stream("POST", f"{stub.url}/chat/completions", json=body) as reply:
                    async for _ in reply.aiter_lines():
                        pass
                return time.perf_counter() - start

            await turn()  # the request body the direct side repeats
            mine, theirs = await interleaved(turn, direct, reps)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()  # type: ignore[no-untyped-call]
        await drain
    what = "a plain-answer turn vs the provider's own reply"
    note = (
        f"overhead {ms(mine - theirs)} a turn: LSP round trip, session writes, request built "
        "from the store, streamed updates; same stub, same reply"
    )
    return Row(what, ms(mine), ms(theirs), ratio(mine, theirs), note)
