"""A cancel that reaches a turn between its claim and its task's first step (reliability
campaign ``cancel``, seed 20261201: ``$/cancelRequest`` at once after ``tether.run``).

Such a task never runs its body, so nothing of the turn's own ending ran: the session
stayed ``running`` in the store, owned by this live process, and every later prompt on
it was refused as busy.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.doubles import ScriptedProvider, reply
from tests.unit.agent.harness import Harness
from tether.agent.events import StatusUpdate
from tether.models import ToolMessage


async def test_a_turn_cancelled_before_its_first_step_ends_cancelled_and_frees_the_session(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, ScriptedProvider(reply(text="never sent"), reply(text="next")))
    session = h.session("go")
    running = asyncio.create_task(h.run("go", session))
    await asyncio.sleep(0)  # the turn is claimed and its task made, not yet started

    assert h.service.cancel(session, h.recorder)
    result = await running

    assert result.status == "cancelled"
    assert h.store.sessions.get(session).status == "cancelled"
    statuses = [u.status for u in h.recorder.updates if isinstance(u, StatusUpdate)]
    assert statuses == ["cancelled"]
    assert (await h.run("again", session)).status == "done"
    said = [m.content for m in h.store.transcript.load(session) if not isinstance(m, ToolMessage)]
    assert said == ["again", "never sent"]
