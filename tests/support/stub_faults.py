"""Pieces of scripted answers that know no wire format: the fault modes, which work
on whatever a stub streams, and how a call's arguments are cut into pieces."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.support.loopback import Exchange, Scripted


@dataclass(frozen=True)
class _Faulty(Scripted):
    reply: Scripted
    drop_after: int | None = None
    stall_after: int | None = None
    stall_s: float = 0.0

    def serve(self, exchange: Exchange) -> None:
        exchange.drop_after, exchange.stall_after = self.drop_after, self.stall_after
        exchange.stall_s = self.stall_s
        self.reply.serve(exchange)


@dataclass(frozen=True)
class _Raw(Scripted):
    raw: str

    def serve(self, exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.write_chunk(self.raw.encode())
        exchange.end_stream()


def drop_after(n_events: int, reply: Scripted) -> Scripted:
    """Stream ``reply`` but hang up, mid-chunked-body, once ``n_events`` events are out."""
    return _Faulty(reply, drop_after=n_events)


def stall(seconds: float, reply: Scripted, after_events: int) -> Scripted:
    """Stream ``reply`` but go quiet for ``seconds`` once ``after_events`` events are out."""
    return _Faulty(reply, stall_after=after_events, stall_s=seconds)


def raw_stream(raw: str) -> Scripted:
    """A 200 event stream whose body is exactly ``raw``, well formed or not."""
    return _Raw(raw)


def raw_calls(calls: tuple[tuple[str, dict[str, Any] | str], ...]) -> tuple[tuple[str, str], ...]:
    """``(name, arguments)`` with the arguments as sent: a dict as JSON, a str as it is."""
    return tuple((name, a if isinstance(a, str) else json.dumps(a)) for name, a in calls)


def thirds(arguments: str) -> list[str]:
    """The pieces a call's arguments are streamed in."""
    size = max(1, -(-len(arguments) // 3))
    return [arguments[at : at + size] for at in range(0, len(arguments), size)] or [""]


# The call ``cut_off_in_tool_call()`` makes when given none.
EDIT_CALL: tuple[str, dict[str, Any] | str] = (
    "edit_file",
    {"path": "a.py", "old": "x = 1", "new": "x = 2"},
)
