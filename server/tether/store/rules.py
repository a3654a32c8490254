"""Remembered approvals: a rule allows, or denies, calls of one tool whose key matches,
in a scope.

A key is what the tool says a call may be remembered by (for a command, its
executable and leading arguments; for a patch, the file), so a rule never
means "any command". A person who said "never" means it: where a deny rule and an allow
rule cover the same call, the deny rule decides, and remembering "allow" where a deny rule
already holds (same scope, tool and key) leaves the deny rule as it is (forget it first).
"""

from __future__ import annotations

import sqlite3

from tether.models import Frozen, Scope, Verdict, iso, now


class Rule(Frozen):
    id: int
    scope: Scope
    scope_id: str  # the session, or the workspace
    tool: str
    key: str
    words: str
    created: str
    verdict: Verdict = "allow"


class RuleBook:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def add(
        self,
        scope: Scope,
        scope_id: str,
        tool: str,
        key: str,
        words: str,
        verdict: Verdict = "allow",
    ) -> Rule:
        """Remember a rule, or keep the one that holds there (a deny replaces an allow)."""
        self._db.execute(
            "INSERT INTO rules (scope, scope_id, tool, key, words, created, verdict)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (scope, scope_id, tool, key) DO UPDATE SET"
            " verdict = excluded.verdict, words = excluded.words, created = excluded.created"
            " WHERE excluded.verdict = 'deny' AND verdict = 'allow'",
            (scope, scope_id, tool, key, words, iso(now()), verdict),
        )
        row = self._db.execute(
            "SELECT * FROM rules WHERE scope = ? AND scope_id = ? AND tool = ? AND key = ?",
            (scope, scope_id, tool, key),
        ).fetchone()
        return _rule(row)

    def match(self, session: str, workspace: str, tool: str, key: str) -> Rule | None:
        """The rule that decides a call of ``tool`` with ``key``: a deny rule before any
        allow rule."""
        row = self._db.execute(
            "SELECT * FROM rules WHERE tool = ? AND key = ? AND"
            " ((scope = 'session' AND scope_id = ?) OR (scope = 'workspace' AND scope_id = ?))"
            " ORDER BY verdict = 'deny' DESC, id",
            (tool, key, session, workspace),
        ).fetchone()
        return _rule(row) if row else None

    def of_workspace(self, workspace: str) -> list[Rule]:
        """The workspace's rules, and those of its sessions."""
        rows = self._db.execute(
            "SELECT * FROM rules WHERE (scope = 'workspace' AND scope_id = ?)"
            " OR (scope = 'session' AND scope_id IN"
            "     (SELECT id FROM sessions WHERE workspace = ?)) ORDER BY id",
            (workspace, workspace),
        ).fetchall()
        return [_rule(row) for row in rows]

    def remove(self, rule: int) -> bool:
        return bool(self._db.execute("DELETE FROM rules WHERE id = ?", (rule,)).rowcount)

    def listed(self, session: str, workspace: str) -> list[Rule]:
        rows = self._db.execute(
            "SELECT * FROM rules WHERE (scope = 'session' AND scope_id = ?)"
            " OR (scope = 'workspace' AND scope_id = ?) ORDER BY id",
            (session, workspace),
        ).fetchall()
        return [_rule(row) for row in rows]


def _rule(row: sqlite3.Row) -> Rule:
    return Rule.model_validate({name: row[name] for name in Rule.model_fields})
