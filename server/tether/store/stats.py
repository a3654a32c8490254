"""A session's numbers: tool time and the provider's usage, per turn."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from tether.models import Stats, TurnUsage, parse_iso


def session_stats(db: sqlite3.Connection, session: str) -> Stats:
    """Tool time (the union of the calls' spans, and their sum) and the provider's usage."""
    rows = db.execute(
        "SELECT started_at, ended_at, sandboxed FROM tool_calls WHERE session_id = ?", (session,)
    ).fetchall()
    spans = sorted(
        (start, end)
        for start, end in ((parse_iso(r["started_at"]), parse_iso(r["ended_at"])) for r in rows)
        if start is not None and end is not None
    )
    turns: list[TurnUsage] = []
    for row in db.execute(
        "SELECT role, input_tokens, output_tokens FROM messages WHERE session_id = ? ORDER BY seq",
        (session,),
    ):
        if row["role"] == "user" or not turns:
            turns.append(TurnUsage())
        if row["input_tokens"] is not None:
            last = turns[-1]
            turns[-1] = TurnUsage(
                requests=last.requests + 1,
                input_tokens=last.input_tokens + row["input_tokens"],
                output_tokens=last.output_tokens + row["output_tokens"],
            )
    return Stats(
        requests=sum(t.requests for t in turns),
        input_tokens=sum(t.input_tokens for t in turns),
        output_tokens=sum(t.output_tokens for t in turns),
        turns=turns,
        tool_calls=len(rows),
        commands_sandboxed=sum(1 for r in rows if r["sandboxed"] == 1),
        commands_unsandboxed=sum(1 for r in rows if r["sandboxed"] == 0),
        tool_time_s=round(_union_seconds(spans), 6),
        tool_time_sum_s=round(sum((end - start).total_seconds() for start, end in spans), 6),
    )


def _union_seconds(spans: Sequence[tuple[datetime, datetime]]) -> float:
    """Wall time covered by the spans (sorted by start): overlaps count once."""
    total = 0.0
    current: tuple[datetime, datetime] | None = None
    for start, end in spans:
        if current is None or start > current[1]:
            if current is not None:
                total += (current[1] - current[0]).total_seconds()
            current = (start, end)
        else:
            current = (current[0], max(current[1], end))
    if current is not None:
        total += (current[1] - current[0]).total_seconds()
    return total
