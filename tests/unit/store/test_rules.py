"""Remembered approvals in the store: a rule matches one tool's key, in its scope only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "s.sqlite3")


def test_a_workspace_rule_matches_its_tool_and_key_in_every_session(store: Store) -> None:
    store.rules.add("workspace", "/ws", "command", "git status", "run `git status …` commands")
    rule = store.rules.match("any-session", "/ws", "command", "git status")
    assert rule is not None and rule.scope == "workspace"
    assert store.rules.match("any-session", "/ws", "patch", "git status") is None
    assert store.rules.match("any-session", "/ws", "command", "git push") is None
    assert store.rules.match("any-session", "/other", "command", "git status") is None


def test_a_session_rule_holds_in_that_session_only(store: Store) -> None:
    store.rules.add("session", "s1", "patch", "a.py", "edit a.py")
    assert store.rules.match("s1", "/ws", "patch", "a.py") is not None
    assert store.rules.match("s2", "/ws", "patch", "a.py") is None


def test_remembering_the_same_rule_twice_keeps_one(store: Store) -> None:
    first = store.rules.add("session", "s1", "patch", "a.py", "edit a.py")
    again = store.rules.add("session", "s1", "patch", "a.py", "edit a.py")
    assert first.id == again.id
    assert [r.id for r in store.rules.listed("s1", "/ws")] == [first.id]
