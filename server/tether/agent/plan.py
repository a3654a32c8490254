"""The dispatcher's rules as one pure function: how a reply's calls are resolved as a unit.

A reply's calls, in order, are cut into segments (``shared/spec/dispatch.md``): a
maximal run of read-only calls is one segment, run together when it holds two or
more calls and no two are the same call, else in order; each approval-requiring
call is a segment of its own. Calls that do not validate and calls past the turn's
tool budget stand in no segment: they are answered at once. The repeat guard (the
Nth identical call of a turn) cuts the plan where that call stands: it and what
follows are not run, except the calls of a segment that runs together, which run
whole; the turn then stops after this reply.

Nothing here runs, awaits or stores anything: ``plan`` is property-tested on its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["read", "gated", "invalid"]


@dataclass(frozen=True)
class Step:
    """What the planner knows of a call: its identity (tool and arguments) and kind."""

    key: str
    kind: Kind


@dataclass(frozen=True)
class Counts:
    """What a turn has counted: its tool budget, the calls it made, each call's count."""

    budget: int
    used: int = 0
    seen: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def resuming(cls, budget: int, earlier: Sequence[str], reply: int) -> Counts:
        """A parked reply resumed (maybe by another process): the turn's earlier calls
        counted again, and the reply's ``reply`` calls granted the budget they had when
        the reply was first planned."""
        used = len(earlier)
        return cls(budget=max(budget, used + reply), used=used, seen=Counter(earlier))

    def extended(self, by: int) -> Counts:
        return Counts(self.budget + by, self.used, self.seen)

    def over(self, calls: int) -> int:
        """How many of ``calls`` more would go past the budget."""
        return min(calls, max(0, self.used + calls - self.budget))


@dataclass(frozen=True)
class Reads:
    calls: tuple[int, ...]
    together: bool


@dataclass(frozen=True)
class Ask:
    call: int


Segment = Reads | Ask


@dataclass(frozen=True)
class Plan:
    segments: tuple[Segment, ...]
    invalid: tuple[int, ...]  # answered `error` at once
    over_budget: tuple[int, ...]  # answered `not_executed` at once
    cut: tuple[int, ...]  # left unrun by the repeat guard: `not_executed`
    stop: str | None  # why the turn stops after this reply
    counts: Counts  # the turn's counts after this reply


def plan(steps: Sequence[Step], counts: Counts, repeat_limit: int) -> Plan:
    tally = _tally(steps, counts, repeat_limit)
    segments, cut = _cut(list(_segments(tally.valid, steps)), tally.guard_at)
    stop = None
    if tally.guard_at is not None:
        stop = f"the same call was made {repeat_limit} times in this turn (repeat guard)"
    elif tally.over:
        stop = budget_spent(counts)
    return Plan(
        segments=tuple(segments),
        invalid=tuple(tally.invalid),
        over_budget=tuple(tally.over),
        cut=tuple(cut),
        stop=stop,
        counts=tally.counts,
    )


@dataclass
class _Tally:
    counts: Counts
    valid: list[int] = field(default_factory=list)
    invalid: list[int] = field(default_factory=list)
    over: list[int] = field(default_factory=list)
    guard_at: int | None = None  # where the Nth identical call of the turn stands


def _tally(steps: Sequence[Step], counts: Counts, repeat_limit: int) -> _Tally:
    """Each call's budget and guard verdict, in call order, before anything runs."""
    used, seen = counts.used, Counter(counts.seen)
    tally = _Tally(counts)
    for idx, step in enumerate(steps):
        used += 1
        if used > counts.budget:
            tally.over.append(idx)
            continue
        seen[step.key] += 1
        if tally.guard_at is None and seen[step.key] >= repeat_limit:
            tally.guard_at = idx
        (tally.invalid if step.kind == "invalid" else tally.valid).append(idx)
    tally.counts = Counts(counts.budget, used, seen)
    return tally


def _cut(segments: list[Segment], guard_at: int | None) -> tuple[list[Segment], list[int]]:
    """The segments that run and the calls the guard cuts: a batch that begins before the
    guard runs whole, together; else only the calls before the guard run."""
    kept: list[Segment] = []
    cut: list[int] = []
    stopped = False
    for segment in segments:
        calls = _calls(segment)
        if stopped:
            cut.extend(calls)
        elif guard_at is None or calls[-1] < guard_at:
            kept.append(segment)
        else:  # the guard stands here, or just before, on an invalid call
            stopped = True
            whole = isinstance(segment, Reads) and segment.together and calls[0] < guard_at
            before = calls if whole else tuple(i for i in calls if i < guard_at)
            if before:
                kept.append(Reads(before, together=whole))
            cut.extend(i for i in calls if i not in before)
    return kept, cut


def _segments(valid: Sequence[int], steps: Sequence[Step]) -> Iterator[Segment]:
    """Maximal runs of reads, and each gated call alone (invalid calls stand in none)."""
    run: list[int] = []
    for idx in valid:
        if steps[idx].kind == "read":
            run.append(idx)
            continue
        if run:
            yield _reads(run, steps)
            run = []
        yield Ask(idx)
    if run:
        yield _reads(run, steps)


def _reads(run: Sequence[int], steps: Sequence[Step]) -> Reads:
    distinct = len({steps[i].key for i in run}) == len(run)
    return Reads(tuple(run), together=len(run) > 1 and distinct)


def _calls(segment: Segment) -> tuple[int, ...]:
    return segment.calls if isinstance(segment, Reads) else (segment.call,)


def budget_spent(counts: Counts) -> str:
    return f"the tool budget of {counts.budget} calls for this turn is spent"
