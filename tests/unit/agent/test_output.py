"""A running call's output, told to the editor in pieces (agent/output.py)."""

from __future__ import annotations

import asyncio

from tests.unit.agent.harness import Recorder
from tether.agent.events import OutputUpdate
from tether.agent.output import INTERVAL_S, MAX_PENDING, TAIL_CHARS, LiveOutput


def texts(recorder: Recorder) -> list[str]:
    return [u.text for u in recorder.updates if isinstance(u, OutputUpdate)]


async def test_writes_close_together_go_as_one_piece_and_later_ones_as_another() -> None:
    recorder = Recorder()
    live = LiveOutput(recorder, "s", "c1")
    for line in ("one\n", "two\n", "three\n"):
        live.write(line)
    assert texts(recorder) == []  # not one notification per write
    await asyncio.sleep(INTERVAL_S * 2)
    live.write("four\n")
    live.close()  # the rest goes at once when the call ends
    assert texts(recorder) == ["one\ntwo\nthree\n", "four\n"]
    assert all(isinstance(u, OutputUpdate) and u.call_id == "c1" for u in recorder.updates)


async def test_a_flood_reaches_the_editor_as_its_latest_part_with_a_note() -> None:
    recorder = Recorder()
    live = LiveOutput(recorder, "s", "c1")
    for i in range(10_000):
        live.write(f"line {i:05d}\n")  # 110,000 characters within one interval
    live.close()
    (piece,) = texts(recorder)
    assert piece.startswith(f"[… {110_000 - MAX_PENDING:,} characters not shown live …]\n")
    assert piece.endswith("line 09999\n") and len(piece) < MAX_PENDING + 100
    assert live.tail == "".join(f"line {i:05d}\n" for i in range(10_000))[-TAIL_CHARS:]


async def test_nothing_written_sends_nothing() -> None:
    recorder = Recorder()
    LiveOutput(recorder, "s", "c1").close()
    assert recorder.updates == []
