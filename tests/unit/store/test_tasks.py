"""Scheduled tasks in the store: intervals, slots, missed runs."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tether.errors import RequestError
from tether.models import now
from tether.store import Store
from tether.store.tasks import parse_every


@pytest.mark.parametrize(
    ("every", "seconds"),
    [("30m", 1800), ("6h", 21600), ("1d", 86400), ("90s", 90), (" 2 h ", 7200)],
)
def test_intervals(every: str, seconds: float) -> None:
    assert parse_every(every) == seconds


@pytest.mark.parametrize("every", ["soon", "5", "m", "-5m", "0s", "5w"])
def test_bad_intervals_say_what_to_give(every: str) -> None:
    with pytest.raises(RequestError, match="30m, 6h"):
        parse_every(every)


def test_a_task_missed_for_many_slots_is_claimed_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    task = store.tasks.add("/ws", "tick", "1m", None)
    later = now() + timedelta(minutes=10)  # ten slots passed

    assert [t.id for t in store.tasks.claim_due("/ws", later)] == [task.id]
    assert store.tasks.claim_due("/ws", later) == []
    following = store.tasks.get(task.id)
    assert following.last_run is not None and following.next_run > following.last_run


def test_tasks_belong_to_their_workspace(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.tasks.add("/one", "a", "1m", None)
    assert store.tasks.listed("/two") == []
    assert store.tasks.claim_due("/two", now() + timedelta(hours=1)) == []
