"""``tether acp``: serve one ACP client over stdin and stdout until it hangs up.

stdout is the ACP channel and nothing else may write there: the channel gets its own
copy of the descriptor, and descriptor 1 then points at stderr, so a stray ``print`` or a
program that writes to its inherited stdout lands in the log, never in the protocol.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from acp import AgentSideConnection

from tether import hardening
from tether.acp.agent import TetherAgent
from tether.acp.link import Link
from tether.acp.wire import LineReader, LineTransport, LineWriter
from tether.acp.workspaces import Workspaces
from tether.children import reap_without_threads
from tether.config import Configuration
from tether.outbound import RedactingFilter

log = logging.getLogger(__name__)
INTERRUPTED = 130
ANSWERS_WAIT_S = 10.0  # at most, after the client hung up, for answers still being made


def serve(level: str) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=level, format="tether %(levelname)s %(name)s: %(message)s"
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())  # a key never reaches the log, even at DEBUG
    channel = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    config = Configuration()  # the settings read the keys: they leave the process now
    hardening.forget_keys()
    hardening.make_undumpable()
    if sys.stdin.isatty():
        log.warning("speaking ACP on stdin and stdout: an editor starts this itself")
    try:
        return asyncio.run(_serve(config, sys.stdin.fileno(), channel))
    except KeyboardInterrupt:
        return INTERRUPTED


async def _serve(config: Configuration, into: int, out: int) -> int:
    reap_without_threads()
    link = Link()
    workspaces = Workspaces(config, link)
    transport = LineTransport(LineReader(into), LineWriter(out))
    conn = AgentSideConnection(
        lambda _: TetherAgent(workspaces, link),
        transport,
        listening=False,
        use_unstable_protocol=True,  # session/resume is still "unstable" in the SDK
    )
    try:
        await conn.listen()
    finally:
        log.info("the client has gone: every turn ends, its calls answered")
        link.conn = None  # nobody is asked any more: a call waiting for a decision parks
        await workspaces.shutdown()
        await transport.answered(ANSWERS_WAIT_S)  # each request's answer, if it still reads
        await conn.close()
    return 0
