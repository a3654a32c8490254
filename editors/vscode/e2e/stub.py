"""The provider the end-to-end test talks to: the loopback stub from tests/support,
scripted with every reply the scenarios of run.mjs need, in the order they ask.

Prints the stub's URL on one line, then serves until its stdin closes. Every
request body it received is written to the file given as the first argument, as
one JSON document per line, when it stops.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.support.provider_stub import ProviderStub, text, tool_calls

# Long enough, and slow enough, that the chat view shows it arrive piece by piece.
ANSWER = (
    "Hello from the stub provider. This answer arrives in small pieces, "
    "so the chat view shows it growing as it streams."
)
PATCH = {"path": "app.py", "edits": [{"old": "x = 1", "new": "x = 2"}]}
COMMAND = {"command": "echo made-by-tether > made.txt"}
PARKED = {"command": "echo parked-then-allowed > parked.txt"}
RISKY = {"command": "rm -f made.txt"}


def main() -> None:
    record = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    with ProviderStub() as stub:
        stub.script(
            # 1. ask in the chat view: a streamed answer
            text(ANSWER, chunk_size=6, delay_s=0.08),
            # 2. a patch, approved from its card in the chat view
            tool_calls(("patch", PATCH)),
            text("Patched app.py: x is 2 now."),
            # 3. a command, approved from the notification dialog
            tool_calls(("command", COMMAND)),
            text("The command made made.txt."),
            # 4. a command whose dialog is dismissed (it parks), then allowed from its card
            tool_calls(("command", PARKED)),
            text("Resumed after the wait: parked.txt is there."),
            # 5. a command denied with the command "tether: Deny Pending Calls"
            tool_calls(("command", RISKY)),
            text("Understood: made.txt stays."),
        )
        print(stub.url, flush=True)
        sys.stdin.read()
        if record is not None:
            record.write_text("".join(json.dumps(body) + "\n" for body in stub.requests))


if __name__ == "__main__":
    main()
