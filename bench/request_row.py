"""A row: building the request for a session of 5,000 messages, as ``Agent.reply`` builds it
each round (the compaction check, the context loaded from the store, the body as sent),
against the goal of 10 ms. The session: 1,250 rounds of a prompt, a reply with one call,
its result, and an answer in words (the messages a coding session holds)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.timing import Row, ms, ratio
from tether.agent.compaction import Compactor
from tether.config import Settings, TurnSettings
from tether.models import Reply, ToolCall, ToolResult, Usage
from tether.providers.base import ChatRequest
from tether.providers.openai import OpenAIProvider
from tether.store import Store

ROUNDS = 1250  # four messages each
GOAL_S = 0.010
USAGE = Usage(input_tokens=1000, output_tokens=50)  # providers report it: no estimate needed


async def row(workspace: Path, state: Path, reps: int) -> Row:
    store = Store(state / "request-bench.sqlite3")
    session = store.sessions.create(workspace, "5,000 messages")
    for n in range(ROUNDS):
        store.transcript.append_user(session, f"look at part {n} of the parser " * 4)
        call = ToolCall(id=f"c{n}", name="fs-read", arguments=f'{{"path": "src/part{n}.py"}}')
        stored = store.transcript.append_reply(
            session, Reply(text="", tool_calls=(call,), usage=USAGE)
        )
        result = ToolResult(call_id=call.id, tool="fs-read", status="ok", content="x = 1\n" * 60)
        store.transcript.record_result(session, stored.seq, 0, result)
        store.transcript.append_reply(
            session, Reply(text=f"Part {n} parses headers. " * 6, usage=USAGE)
        )
    settings = Settings.load({}, {})
    provider = OpenAIProvider(settings.provider)
    # A window this session fits in: the row measures building, not compacting.
    compactor = Compactor(provider, store, TurnSettings(context_tokens=10_000_000))
    times: list[float] = []
    cpu: list[float] = []  # a loaded machine stretches the wall time, not this
    count = 0
    for _ in range(reps + 1):  # the first is the turn's first round: all of it is loaded
        start, began = time.perf_counter(), time.process_time()
        messages = await compactor.prepared(session)
        provider.request_body(ChatRequest(system="system", messages=tuple(messages)), "bench")
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - began)
        count = len(messages)
    await provider.aclose()
    store.close()
    took = statistics.median(times[1:])
    return Row(
        "building a request for a session of 5,000 messages",
        ms(took),
        f"{GOAL_S * 1e3:.0f} ms (goal)",
        ratio(took, GOAL_S),
        f"{count} messages, a round after the first: compaction check, context, body as sent;"
        f" CPU {ms(statistics.median(cpu[1:]))}; the turn's first round {ms(times[0])}",
    )
