"""``python -m bench.stub_process``: the provider stub in a process of its own, for the
turn row, as a provider is (in the bench's process it shared one GIL with both sides'
readers).

It prints its URL, answers every request with ``ANSWER`` streamed as the stub streams
it, prints the first request's body (the direct side sends the same), and ends when its
standard input closes.
"""

from __future__ import annotations

import json
import sys

from tests.support.provider_stub import ProviderStub, text

ANSWER = "The configuration is parsed in config.py, by Settings.load. " * 4
REPLIES = 2_000  # more than a row's turns and direct requests together


def main() -> int:
    with ProviderStub() as stub:
        stub.script(*[text(ANSWER)] * REPLIES)
        print(stub.url, flush=True)
        (first,) = stub.wait_for_requests(1, timeout=600)[:1]
        print(json.dumps(first), flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
