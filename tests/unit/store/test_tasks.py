"""Scheduled tasks in the store: intervals, slots, missed runs."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tether.errors import NotFound
from tether.models import now
from tether.store import Store


def test_a_task_missed_for_many_slots_is_claimed_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    task = store.tasks.add("/ws", "tick", "1m", 60, None)
    later = now() + timedelta(minutes=10)  # ten slots passed

    assert [t.id for t in store.tasks.claim_due("/ws", later)] == [task.id]
    assert store.tasks.claim_due("/ws", later) == []
    following = store.tasks.get(task.id)
    assert following.last_run is not None and following.next_run > following.last_run


def test_tasks_belong_to_their_workspace(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.tasks.add("/one", "a", "1m", 60, None)
    assert store.tasks.listed("/two") == []
    assert store.tasks.claim_due("/two", now() + timedelta(hours=1)) == []


def test_an_unknown_task_is_not_found(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        store.tasks.remove("nope")
