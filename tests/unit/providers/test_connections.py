"""One connection to the provider for a session's requests, for each API: a reply's body
is read to its end, so that its connection goes back to the pool."""

from __future__ import annotations

import importlib.abc
import sys
import time
from dataclasses import dataclass

import pytest

from tests.support.loopback import Exchange, Scripted
from tests.unit.providers.wires import ASK, Wire, texts
from tether.providers import make_provider
from tether.providers.body import FINISH_S


@dataclass(frozen=True)
class Lingering(Scripted):
    """``reply``, with the end of its body held back ``seconds`` after its last event."""

    reply: Scripted
    seconds: float

    def serve(self, exchange: Exchange) -> None:
        end = exchange.end_stream

        def late() -> None:
            if not exchange.wait(self.seconds):
                end()

        exchange.end_stream = late  # type: ignore[method-assign]
        self.reply.serve(exchange)


async def test_a_sessions_requests_share_one_connection(wire: Wire) -> None:
    # Before: the body's last bytes (after [DONE], after message_stop) were left unread,
    # and each request of a turn opened a connection (with TLS, a round trip or three).
    wire.stub.script(*(wire.api.text(f"reply {n}") for n in range(3)))
    provider = make_provider(wire.settings())
    for n in range(3):
        assert texts([event async for event in provider.stream(ASK)])[1] == f"reply {n}"
    await provider.aclose()
    assert wire.stub.connections == 1


async def test_a_body_held_open_after_its_reply_costs_the_reply_nothing(wire: Wire) -> None:
    wire.stub.script(Lingering(wire.api.text("late end"), seconds=5), wire.api.text("next"))
    provider = make_provider(wire.settings())
    began = time.monotonic()
    assert texts([event async for event in provider.stream(ASK)])[1] == "late end"
    assert time.monotonic() - began < FINISH_S + 2  # not the 5 s the server held it
    assert texts([event async for event in provider.stream(ASK)])[1] == "next"
    await provider.aclose()
    assert wire.stub.connections == 2  # the held one was given up, not waited for


class Searches(importlib.abc.MetaPathFinder):
    """Notes every module the import system goes looking for, and finds none itself."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, name: str, *args: object) -> None:
        self.names.append(name)


async def test_a_request_looks_for_no_module(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    """httpcore asks sniffio which event loop runs at every step of a request; without it
    installed each ask was a failed import, a search of the whole path (42 µs each, ~1 ms
    of a plain turn)."""
    wire.stub.script(wire.api.text("warm"), wire.api.text("measured"))
    provider = make_provider(wire.settings())
    assert texts([event async for event in provider.stream(ASK)])[1] == "warm"
    searches = Searches()
    monkeypatch.setattr(sys, "meta_path", [searches, *sys.meta_path])
    assert texts([event async for event in provider.stream(ASK)])[1] == "measured"
    await provider.aclose()
    assert searches.names == []
