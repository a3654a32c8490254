"""Two tether processes on one store never run one session at once (reliability campaign
``servers``, seed 20261201: two windows sending ``tether.run`` on one session).

The race it found: a window opens the session (idle), awaits the editor's progress
token, and meanwhile the other window claims the session; the first then read the row,
``running`` by the other, and its claim, conditional on the row being as it was just
read, held. Both ran the turn and their messages interleaved. Another process is played
here by a second ``Store`` on the same file and a live process that is not this one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.doubles import ScriptedProvider, reply
from tests.unit.agent.harness import Harness
from tether.errors import SessionBusy
from tether.models import ToolMessage
from tether.store import Store


@pytest.fixture
def other_process() -> Iterator[int]:
    """The pid of a live process that is not this one: the other window's server."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process.pid
    process.kill()
    process.wait()


async def test_a_session_claimed_by_another_process_after_it_was_opened_is_busy(
    tmp_path: Path, other_process: int
) -> None:
    h = Harness(tmp_path, ScriptedProvider(reply(text="first"), reply(text="second")))
    session = h.session("first")
    assert (await h.run("first", session)).status == "done"
    h.service.open("second", session)  # the window opened it; its progress token is asked
    other = Store(h.store.path)  # meanwhile the other window's server claims the session
    assert other.sessions.claim(other.sessions.get(session), "running", owner=other_process)

    with pytest.raises(SessionBusy):
        await h.service.run(session, "second", h.recorder)

    info = other.sessions.get(session)
    assert (info.status, info.owner) == ("running", other_process)
    said = [m.content for m in h.store.transcript.load(session) if not isinstance(m, ToolMessage)]
    assert said == ["first", "first"]
    assert len(h.provider.requests) == 1


async def test_opening_a_session_never_repairs_calls_of_a_turn_claimed_since(
    tmp_path: Path, other_process: int
) -> None:
    h = Harness(tmp_path, ScriptedProvider(reply(text="first")))
    session = h.session("first")
    assert (await h.run("first", session)).status == "done"
    seen = h.store.sessions.get(session)  # what this window saw as it began to open it
    other = Store(h.store.path)
    assert other.sessions.claim(seen, "running", owner=other_process)
    running = other.transcript.append_reply(session, reply(("echo", {"value": "v"})))

    assert h.store.transcript.repair(session, seen=seen) is None

    last = other.transcript.last_reply(session)
    assert last is not None and last.seq == running.seq and not last.answered
    with pytest.raises(SessionBusy):
        h.service.open("again", session)
