"""Sessions in the store: listing, and the claim that lets one process run a turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.errors import NotFound
from tether.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "state" / "sessions.sqlite3")


def test_sessions_are_listed_per_workspace_newest_first(store: Store) -> None:
    a = store.sessions.create(Path("/one"), "a")
    b = store.sessions.create(Path("/one"), "b")
    store.sessions.create(Path("/two"), "c")
    store.transcript.append_user(a, "touch a last")
    assert [s.id for s in store.sessions.listed(Path("/one"))] == [a, b]
    with pytest.raises(NotFound, match="unknown session 'nope'"):
        store.sessions.get("nope")


def test_only_one_of_two_processes_claims_a_session(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    one, two = Store(path), Store(path)  # two servers sharing a state_dir
    session = one.sessions.create(Path("/ws"), "t")
    seen_by_one, seen_by_two = one.sessions.get(session), two.sessions.get(session)

    assert one.sessions.claim(seen_by_one, "running", owner=111)
    assert not two.sessions.claim(seen_by_two, "running", owner=222)
    assert two.sessions.get(session).owner == 111


def test_a_turn_that_ends_gives_the_session_up(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "t")
    assert store.sessions.claim(store.sessions.get(session), "running", owner=111)
    store.sessions.set_status(session, "done")
    info = store.sessions.get(session)
    assert (info.status, info.owner) == ("done", None)
