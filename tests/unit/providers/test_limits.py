"""A provider that sends without end costs tether what its limits allow, not what was
sent: a reply, a line and an error body each stop at their limit with a message that
names it, and what was read is freed with the stream.

Memory is Python's own allocations as ``tracemalloc`` counts them (the loopback stub
runs in this process too, so its share is in the numbers): the growth at the peak,
and what is still held after the error, with the error still held.
"""

from __future__ import annotations

import tracemalloc
from dataclasses import dataclass

import pytest

from tests.support import stub_faults
from tests.support.loopback import Scripted
from tests.unit.providers.wires import ASK, KEY, Wire
from tether.errors import ProviderError
from tether.providers import make_provider
from tether.providers.base import TextDelta
from tether.providers.sse import LINE_LIMIT
from tether.providers.streaming import REPLY_LIMIT

MiB = 2**20
# The start of each wire format's error body; a huge one goes on with "xxx...".
ERROR_HEAD = {
    "openai": '{"error": {"type": "server_error", "message": "',
    "anthropic": '{"type": "error", "error": {"type": "api_error", "message": "',
}


@dataclass
class Flood:
    message: str
    shown: int  # characters of text the caller was shown before the error
    peak: int  # bytes allocated at the peak, over what was allocated before
    retained: int  # bytes still allocated after the error, the error still held


async def flood(wire: Wire, scripted: Scripted, *, give_up_after: int) -> Flood:
    """Run a provider against ``scripted``, which must end in a ``ProviderError``; a caller
    shown more than ``give_up_after`` characters fails the test rather than read on."""
    wire.stub.script(scripted)
    provider = make_provider(wire.settings())
    shown = 0
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as caught:
            async for event in provider.stream(ASK):
                assert isinstance(event, TextDelta)  # never a Reply
                shown += len(event.text)
                if shown > give_up_after:
                    pytest.fail(f"the provider showed {shown:,} characters and went on")
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    await provider.aclose()
    message = str(caught.value)
    assert KEY not in message
    print(f"{wire.kind}: peak {peak / MiB:.2f} MiB, retained {retained / MiB:.3f} MiB")
    return Flood(message, shown, peak, retained)


@pytest.mark.parametrize("into", ["text", "arguments"])
async def test_an_endless_reply_stops_at_the_reply_limit_in_memory_bounded_by_it(
    wire: Wire, into: str
) -> None:
    piece = "x" * 1024
    endless = wire.api.endless(piece, into=into)
    result = await flood(wire, endless, give_up_after=2 * REPLY_LIMIT)
    assert result.message.startswith(
        f"the model provider at {wire.endpoint} sent a reply of more than {REPLY_LIMIT:,} "
        "characters (text and tool calls), past tether's reply limit"
    )
    if into == "text":
        assert REPLY_LIMIT - len(piece) < result.shown <= REPLY_LIMIT
        assert result.message.endswith("; the partial reply was not kept")
    else:
        assert result.shown == 0
    assert result.peak < 2 * REPLY_LIMIT
    assert result.retained < MiB
    assert len(wire.stub.requests) == 1  # a flood is not asked for again


async def test_one_endless_line_stops_at_the_line_limit(wire: Wire) -> None:
    result = await flood(wire, stub_faults.endless_line(), give_up_after=0)
    assert result.message == (
        f"the model provider at {wire.endpoint} sent a line longer than 8 MiB, "
        "past tether's line limit"
    )
    assert result.peak < 2 * LINE_LIMIT
    assert result.retained < MiB
    assert len(wire.stub.requests) == 1


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
async def test_a_200_mb_error_body_is_read_only_to_the_error_body_limit(
    wire: Wire, encoding: str
) -> None:
    huge = stub_faults.huge_error(400, ERROR_HEAD[wire.kind], 200 * 10**6, gzip=encoding == "gzip")
    result = await flood(wire, huge, give_up_after=0)
    said = f"the model provider answered HTTP 400 for {wire.endpoint}: "
    assert result.message.startswith(said + ERROR_HEAD[wire.kind] + "xxxx")
    assert result.message.endswith(
        "xxx (the error body passed tether's error body limit of 64 KiB and was not read further)"
    )
    assert len(result.message) < 700
    assert result.peak < MiB  # for a 200 MB body, the stub's share included
    assert result.retained < MiB
