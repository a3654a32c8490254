"""The provider the end-to-end test talks to: the loopback stub from tests/support,
scripted with every reply the scenarios of run.mjs need, in the order they ask.

Prints the stub's URL on one line, then serves until its stdin closes. Each request
is written as it arrives to the file given as the first argument, as one JSON document
per line: its body, and the Authorization header it carried (so run.mjs can check that
the key from VS Code's secret storage reached the provider).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.support.provider_stub import ProviderStub, Scripted, text, tool_calls

# Long enough, and slow enough, that the chat view shows it arrive piece by piece.
ANSWER = (
    "Hello from the stub provider. This answer arrives in small pieces, "
    "so the chat view shows it growing as it streams."
)
PATCH = {"path": "app.py", "edits": [{"old": "x = 1", "new": "x = 2"}]}
COMMAND = {"command": "echo made-by-tether > made.txt"}
PARKED = {"command": "echo parked-then-allowed > parked.txt"}
RISKY = {"command": "rm -f made.txt"}
# 7. A patch and a command that imports the patched module, in one reply.
PATCH_A = {"path": "a.py", "edits": [{"old": "X = 1", "new": "X = 2"}]}
IMPORT_A = {"command": "python -c 'import a; print(\"a.X =\", a.X)'"}
# 8. The same with b.py, which has unsaved changes of the person's before the patch.
PATCH_B = {"path": "b.py", "edits": [{"old": "Y = 1", "new": "Y = 2"}]}
IMPORT_B = {"command": "python -c 'import b; print(\"b.Y =\", b.Y)'"}
# 9. A command whose output comes over a few seconds.
TICKS = {"command": "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.8; done"}
# 10. Markdown, with HTML that must stay text.
MARKDOWN = (
    "Here is **bold** and `inline code`.\n\n"
    "```python\nprint('fenced')\n```\n\n"
    "<script>document.title = 'pwned'</script>"
    "<img src=x onerror=\"document.title = 'pwned'\">\n\n"
    "[a link that runs script](javascript:document.title='pwned') and "
    "[a real one](https://example.com/docs)."
)
# 11. A long command, stopped with the keybinding while it runs.
LONG = {"command": "echo started; sleep 30; echo never"}


class RecordingStub(ProviderStub):
    """Writes each request (body and Authorization header) to `record` as it arrives."""

    def __init__(self, record: Path | None) -> None:
        super().__init__()
        self.record = record
        self.write_lock = threading.Lock()
        if record is not None:
            record.write_text("")

    def take(self, body: dict[str, Any], headers: dict[str, str]) -> Scripted:
        if self.record is not None:
            line = {"body": body, "authorization": headers.get("authorization")}
            with self.write_lock, self.record.open("a") as out:
                out.write(json.dumps(line) + "\n")
        return super().take(body, headers)


def main() -> None:
    record = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    with RecordingStub(record) as stub:
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
            # 7. a patch to an open, saved a.py and a command that imports it
            tool_calls(("patch", PATCH_A), ("command", IMPORT_A)),
            text("The command saw the patched a.py."),
            # 8. the same to b.py, which the person had changed without saving
            tool_calls(("patch", PATCH_B), ("command", IMPORT_B)),
            text("The command saw b.py as it is on disk."),
            # 9. a command's output, live
            tool_calls(("command", TICKS)),
            text("Counted to six."),
            # 10. markdown
            text(MARKDOWN, chunk_size=40, delay_s=0.02),
            # 11. a long command, stopped with the keybinding
            tool_calls(("command", LONG)),
        )
        print(stub.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
