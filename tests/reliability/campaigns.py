"""The campaigns, by name: what each runs, at the scale CI runs it and at the long scale.

A campaign is ``async def campaign(seed: int, scale: int, root: Path) -> list[Report]``;
``scale`` is its own unit (kills, messages, turns), given in ``BOUNDED`` and ``LONG``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path

from tests.reliability import (
    cancel,
    chaos,
    crash,
    lsp_fuzz,
    parse_fuzz,
    servers,
    soak,
    tool_fuzz,
)
from tests.reliability.harness import Report, Wire

Campaign = Callable[[int, int, Path], Coroutine[object, object, list[Report]]]
OneWire = Callable[[int, int, Path, Wire], Coroutine[object, object, Report]]


@dataclass(frozen=True)
class Entry:
    run: Campaign
    bounded: int  # what CI runs (a few minutes for all campaigns together)
    long: int  # what `python -m tests.reliability --long` runs
    unit: str  # what the scale counts
    one_wire: OneWire | None = None  # the run of one wire format alone, to replay it cheaply


CAMPAIGNS: dict[str, Entry] = {
    "crash": Entry(
        crash.campaign, bounded=12, long=500, unit="kills per wire format", one_wire=crash.one_wire
    ),
    "servers": Entry(servers.campaign, bounded=2, long=10, unit="rounds"),
    "lsp-fuzz": Entry(lsp_fuzz.campaign, bounded=10_000, long=100_000, unit="messages"),
    "tool-fuzz": Entry(tool_fuzz.campaign, bounded=100, long=1_000, unit="examples per tool"),
    "parse-fuzz": Entry(parse_fuzz.campaign, bounded=20, long=200, unit="texts per language"),
    "chaos": Entry(chaos.campaign, bounded=100, long=500, unit="turns per wire format"),
    "cancel": Entry(cancel.campaign, bounded=100, long=500, unit="turns"),
    "soak": Entry(soak.campaign, bounded=300, long=1_000, unit="turns"),
}
SEED = 20261201  # CI's fixed seed
