"""A relay between tether and a real MCP server over stdio, for the tests: it writes when
each ``tools/call`` request reaches the server and when its answer comes back, and holds
each such answer ``HOLD_S`` seconds first, so a test can tell whether two calls were in
flight at once whatever the server's speed.

    python -m tests.support.mcp_relay LOG HOLD_S -- COMMAND [ARG...]

The server's stderr is the relay's own (tether's pipe); its exit code is the relay's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any


def _message(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def main(argv: list[str]) -> int:
    log, hold_s, dashes, *command = argv
    assert dashes == "--" and command, __doc__
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    calls: set[Any] = set()
    lock = threading.Lock()

    def note(what: str) -> None:
        with lock, open(log, "a", encoding="utf-8") as file:
            file.write(f"{what} {time.time():.3f}\n")

    def down() -> None:  # tether -> server
        assert child.stdin is not None
        for line in sys.stdin.buffer:
            message = _message(line)
            if message.get("method") == "tools/call":
                calls.add(message.get("id"))
                note(f"call {message.get('id')}")
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=down, daemon=True).start()
    for line in child.stdout:  # server -> tether
        message = _message(line)
        if "method" not in message and message.get("id") in calls:
            time.sleep(float(hold_s))
            note(f"answer {message.get('id')}")
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
