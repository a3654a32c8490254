"""What the terminal answers from the store without a server: listings as the service
gives them, and which decisions must still go to a server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.store import Store
from tether.terminal import from_store
from tether.terminal.from_store import Unreadable, opened, undecidable


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with opened({"TETHER_HOME": str(tmp_path / "home")}, None) as store:
        yield store


def test_the_store_is_where_the_settings_put_it(tmp_path: Path) -> None:
    env = {"TETHER_HOME": str(tmp_path / "env-home")}
    with opened(env, {"state_dir": str(tmp_path / "options-home")}) as store:
        assert store.path == tmp_path / "options-home" / "sessions.sqlite3"
    with opened(env, None) as store:
        assert store.path == tmp_path / "env-home" / "sessions.sqlite3"


def test_a_bad_setting_is_named_and_the_rest_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"TETHER_HOME": str(tmp_path / "home")}
    with opened(env, {"turn": {"tool_budget": "lots"}, "providr": {}}) as store:
        assert store.path.parent == tmp_path / "home"
    err = capsys.readouterr().err
    assert "tether: setting `turn.tool_budget`" in err and "unknown setting `providr`" in err


def test_a_store_that_cannot_be_opened_says_where(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("a file, not a folder")
    with (
        pytest.raises(Unreadable, match=f"cannot read the sessions in {tmp_path}/home/"),
        opened({"TETHER_HOME": str(tmp_path / "home")}, None),
    ):
        pass


def test_a_turn_left_running_by_a_dead_process_lists_as_interrupted(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = store.sessions.create(tmp_path, "left running")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert store.sessions.claim(store.sessions.get(session), "running", int(dead))

    assert from_store.sessions(store, tmp_path) == 0

    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:2] == [session, "interrupted"]


def test_only_a_parked_or_busy_session_goes_to_a_server(store: Store, tmp_path: Path) -> None:
    parked, busy, done = (store.sessions.create(tmp_path, t) for t in ("p", "b", "d"))
    assert store.sessions.claim(store.sessions.get(parked), "awaiting_approval")
    assert store.sessions.claim(store.sessions.get(busy), "running", os.getppid())
    assert store.sessions.claim(store.sessions.get(done), "done")

    assert undecidable(store, parked) is None
    assert undecidable(store, busy) is None  # the server says it is busy
    assert str(undecidable(store, done)) == f"session {done!r} has no calls waiting for approval"
    assert str(undecidable(store, "nope")) == "unknown session 'nope'"


def test_sessions_table_is_newest_first(capsys: pytest.CaptureFixture[str]) -> None:
    from_store.show_sessions(
        [
            {"id": "old", "status": "done", "updated": "2026-01-01T10:00:00.000Z", "title": "a"},
            {"id": "new", "status": "error", "updated": "2026-02-01T10:00:00.000Z",
             "title": "two\nlines"},
        ],
        Path("/ws"),
    )  # fmt: skip

    header, first, second = capsys.readouterr().out.splitlines()
    assert header.split() == ["ID", "STATUS", "UPDATED", "TITLE"]
    assert first.startswith("new ") and first.endswith("two lines")
    assert second.startswith("old ")


def test_tether_rules_says_which_rules_allow_and_which_deny(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = str(tmp_path)
    store.rules.add("workspace", where, "command", "echo hi", "run exactly `echo hi`")
    store.rules.add("workspace", where, "command", "rm", "run exactly `rm x`", "deny")

    assert from_store.rules(store, tmp_path) == 0

    allow, deny = capsys.readouterr().out.splitlines()
    assert allow.split()[1:3] == ["allow", "command"] and allow.endswith("run exactly `echo hi`")
    assert deny.split()[1:3] == ["deny", "command"] and deny.endswith("run exactly `rm x`")
