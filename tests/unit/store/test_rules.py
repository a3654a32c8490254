"""Remembered approvals in the store: a rule matches one tool's key, in its scope only;
a rule that denies outweighs one that allows; an older store opens with its rules allowing."""

from __future__ import annotations

import sqlite3
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


def test_a_deny_rule_decides_over_an_allow_rule_for_the_same_call(store: Store) -> None:
    store.rules.add("session", "s1", "command", "git push", "run `git push`")
    store.rules.add("workspace", "/ws", "command", "git push", "run `git push`", "deny")
    rule = store.rules.match("s1", "/ws", "command", "git push")
    assert rule is not None and (rule.verdict, rule.scope) == ("deny", "workspace")


def test_deny_replaces_an_allow_in_its_place_and_an_allow_never_replaces_a_deny(
    store: Store,
) -> None:
    allowed = store.rules.add("workspace", "/ws", "patch", "a.py", "edit a.py")
    denied = store.rules.add("workspace", "/ws", "patch", "a.py", "edit a.py", "deny")
    again = store.rules.add("workspace", "/ws", "patch", "a.py", "edit a.py", "allow")
    assert allowed.verdict == "allow" and denied.id == again.id == allowed.id
    assert (denied.verdict, again.verdict) == ("deny", "deny")
    assert [r.verdict for r in store.rules.of_workspace("/ws")] == ["deny"]


def test_forgetting_a_deny_rule_removes_it(store: Store) -> None:
    rule = store.rules.add("workspace", "/ws", "command", "rm", "run `rm …`", "deny")
    assert store.rules.remove(rule.id) is True
    assert store.rules.match("s1", "/ws", "command", "rm") is None


def test_a_store_from_before_deny_rules_opens_and_its_rules_still_allow(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, workspace TEXT NOT NULL, title TEXT NOT NULL,
            status TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL);
        CREATE TABLE rules (id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL CHECK (scope IN ('session', 'workspace')),
            scope_id TEXT NOT NULL, tool TEXT NOT NULL, key TEXT NOT NULL,
            words TEXT NOT NULL, created TEXT NOT NULL, UNIQUE (scope, scope_id, tool, key));
        INSERT INTO rules (scope, scope_id, tool, key, words, created) VALUES
            ('workspace', '/ws', 'command', 'git status', 'run `git status …`', '2026-01-01');
        """
    )
    old.close()

    store = Store(path)

    (kept,) = store.rules.of_workspace("/ws")
    assert (kept.key, kept.verdict) == ("git status", "allow")
    store.rules.add("workspace", "/ws", "command", "rm", "run `rm …`", "deny")
    assert [r.verdict for r in store.rules.of_workspace("/ws")] == ["allow", "deny"]
    store.close()
    assert [r.verdict for r in Store(path).rules.of_workspace("/ws")] == ["allow", "deny"]
