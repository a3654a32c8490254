"""The planner's rules, property-tested over generated replies and turns.

Each property is one rule of ``shared/spec/dispatch.md`` or the contract: every
call has exactly one fate, segments keep call order, reads run together only when
no two are the same call, the budget cuts a suffix, the guard cuts at the Nth
identical call, and the counts carry over to the next reply.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from hypothesis import example, given
from hypothesis import strategies as st

from tether.agent.plan import Ask, Counts, Plan, Reads, Step, plan

KEYS = st.sampled_from(["a", "b", "c", "d"])  # few keys: duplicates and repeats are common
STEPS = st.lists(st.builds(Step, KEYS, st.sampled_from(["read", "gated", "invalid"])), max_size=12)
COUNTS = st.builds(
    Counts,
    budget=st.integers(1, 16),
    used=st.integers(0, 8),
    seen=st.dictionaries(KEYS, st.integers(0, 4)),
)
LIMITS = st.integers(2, 5)


def segment_calls(p: Plan) -> list[int]:
    return [i for s in p.segments for i in (s.calls if isinstance(s, Reads) else (s.call,))]


@given(STEPS, COUNTS, LIMITS)
def test_every_call_has_exactly_one_fate(steps: list[Step], counts: Counts, limit: int) -> None:
    p = plan(steps, counts, limit)
    fates = [*segment_calls(p), *p.invalid, *p.over_budget, *p.cut]
    assert sorted(fates) == list(range(len(steps)))


@given(STEPS, COUNTS, LIMITS)
# Always tried: a read ahead of an approval-requiring call, within the budget and the guard
# (the generated turns often spend them first; the mutation arm "order" survived 2 runs in 3).
@example([Step("a", "read"), Step("b", "gated"), Step("c", "read")], Counts(budget=16), 5)
def test_segments_keep_call_order_and_kind(steps: list[Step], counts: Counts, limit: int) -> None:
    p = plan(steps, counts, limit)
    assert segment_calls(p) == sorted(segment_calls(p))
    for s in p.segments:
        if isinstance(s, Ask):
            assert steps[s.call].kind == "gated"
        else:
            assert s.calls and all(steps[i].kind == "read" for i in s.calls)
    assert all(steps[i].kind == "invalid" for i in p.invalid)


@given(STEPS, COUNTS, LIMITS)
def test_reads_run_together_only_when_two_or_more_and_none_the_same(
    steps: list[Step], counts: Counts, limit: int
) -> None:
    for s in plan(steps, counts, limit).segments:
        if isinstance(s, Reads) and s.together:
            assert len(s.calls) > 1 and len({steps[i].key for i in s.calls}) == len(s.calls)


@given(STEPS, COUNTS, LIMITS)
def test_no_two_read_segments_touch(steps: list[Step], counts: Counts, limit: int) -> None:
    """A maximal run of reads is one segment: an approval-requiring call stands between two."""
    segments = plan(steps, counts, limit).segments
    for first, second in pairwise(segments):
        assert not (isinstance(first, Reads) and isinstance(second, Reads))


@given(STEPS, COUNTS, LIMITS)
def test_the_budget_cuts_a_suffix_and_stops_the_turn(
    steps: list[Step], counts: Counts, limit: int
) -> None:
    p = plan(steps, counts, limit)
    over = counts.over(len(steps))
    assert p.over_budget == tuple(range(len(steps) - over, len(steps)))
    if over:
        assert p.stop is not None


@given(STEPS, COUNTS, LIMITS)
def test_the_guard_fires_on_the_nth_identical_call_and_nothing_after_it_starts(
    steps: list[Step], counts: Counts, limit: int
) -> None:
    p = plan(steps, counts, limit)
    seen = Counter(counts.seen)
    guard = None
    for idx, step in enumerate(steps[: len(steps) - counts.over(len(steps))]):
        seen[step.key] += 1
        if seen[step.key] >= limit:
            guard = idx
            break
    if guard is None:
        assert p.cut == () and (p.stop is None or "budget" in p.stop)
        return
    assert p.stop is not None and "repeat guard" in p.stop
    for s in p.segments:
        calls = s.calls if isinstance(s, Reads) else (s.call,)
        # Only a batch that began before the guard runs past it, and only together.
        if calls[-1] >= guard:
            assert isinstance(s, Reads) and s.together and calls[0] < guard


@given(STEPS, COUNTS, LIMITS)
def test_counts_carry_every_call_within_the_budget(
    steps: list[Step], counts: Counts, limit: int
) -> None:
    p = plan(steps, counts, limit)
    within = steps[: len(steps) - counts.over(len(steps))]
    assert p.counts.used == counts.used + len(steps)
    assert p.counts.seen == Counter(counts.seen) + Counter(s.key for s in within)
    assert p.counts.budget == counts.budget


@given(STEPS, COUNTS, LIMITS)
def test_a_resumed_reply_is_planned_as_it_was_first(
    steps: list[Step], counts: Counts, limit: int
) -> None:
    """A parked reply resumed in a new process gets the same segments and guard verdict,
    with every call granted the budget (over-budget calls were answered when it parked)."""
    first = plan(steps, counts, limit)
    earlier = [k for k, n in counts.seen.items() for _ in range(n)]
    resumed = plan(steps, Counts.resuming(counts.budget, earlier, len(steps)), limit)
    assert resumed.over_budget == ()
    if not first.over_budget:
        assert resumed.segments == first.segments and resumed.cut == first.cut
