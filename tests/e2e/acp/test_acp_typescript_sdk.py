"""The official ACP TypeScript SDK (``@agentclientprotocol/sdk``, editors/acp/client.mjs)
drives ``tether acp`` end to end: concurrent reads through the client, permissions (allow
once, allow always, reject once, reject always: denied in a new session without a
question), a patch with its diff written through the client, cancel, list, and a load that
replays.

Runs where Node is: on the PATH, or the one the VS Code end-to-end tests install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import server_env
from tests.support.provider_stub import ProviderStub, endless, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / "editors" / "acp"
NODE = shutil.which("node") or str(ROOT / "editors/vscode/e2e/node/node_modules/.bin/node")


@pytest.fixture(scope="module")
def sdk() -> Path:
    """The client's package, its SDK installed from the lock file when it is not yet."""
    if not Path(NODE).exists():
        pytest.skip("no Node to run the TypeScript SDK with")
    if not (CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("no npm to install the TypeScript SDK with")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CLIENT, check=True)
    return CLIENT


@pytest.mark.timeout(180)
def test_the_typescript_sdk_drives_a_whole_session(
    sdk: Path, stub: ProviderStub, home: Path, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    (workspace / "b.py").write_text("on disk b\n")
    patch = {"path": "a.py", "edits": [{"old": "y = 2  # unsaved", "new": "y = 3"}]}
    stub.script(
        tool_calls(("fs-read", {"path": "a.py"}), ("fs-read", {"path": "b.py"})),
        text("read"),
        tool_calls(("command", {"command": "echo once"})),
        text("ran once"),
        tool_calls(("command", {"command": "echo always"})),
        text("ran always"),
        tool_calls(("command", {"command": "echo always"})),
        text("ran again"),
        tool_calls(("command", {"command": "touch denied.txt"})),
        text("denied"),
        tool_calls(("command", {"command": "touch never.txt"})),
        text("denied always"),
        tool_calls(("patch", patch)),
        text("patched"),
        endless(),
        tool_calls(("command", {"command": "touch never.txt"})),
        text("denied unasked"),
    )
    agent = [sys.executable, "-m", "tether", "acp"]
    env = {**server_env(stub, home), "PATH": os.environ.get("PATH", "")}

    done = subprocess.run(
        [NODE, str(sdk / "client.mjs"), str(workspace), *agent],
        cwd=sdk,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert report["loadSession"] is True
    stops = ["read", "allowOnce", "allowAlways", "notAskedAgain", "reject", "rejectAlways"]
    stops += ["patch", "cancel", "neverAgain"]
    assert [report[s] for s in stops] == ["end_turn"] * 7 + ["cancelled", "end_turn"]
    # Both reads asked the client, together; a.py's unsaved text is what the model read.
    assert report["mostReading"] == 2
    assert sorted(report["reads"]) == [str(workspace / "a.py"), str(workspace / "b.py")]
    a_read, b_read = (m["content"] for m in stub.requests[1]["messages"] if m["role"] == "tool")
    assert "y = 2  # unsaved" in a_read and "on disk b" in b_read
    # Allow always: asked for "echo always" once, never again; the denied command never ran.
    assert report["askedAfterAlways"] == report["askedInAll"] == 2
    assert not (workspace / "denied.txt").exists()
    asked = report["asked"]
    assert asked[0]["kinds"] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    # Deny always: denied, and in a new session of the workspace denied with no question;
    # the model read why both times.
    assert report["askedAfterNever"] == 4 and report["askedAtTheEnd"] == 5
    assert not (workspace / "never.txt").exists()
    answers = [[m["content"] for m in r["messages"] if m["role"] == "tool"] for r in stub.requests]
    assert answers[11][-1].startswith("denied: the person denied it, and every call like it")
    assert "a rule the person remembered denies it" in answers[-1][-1]
    (diff,) = asked[4]["toolCall"]["content"]
    assert diff == {
        "type": "diff",
        "path": str(workspace / "a.py"),
        "oldText": "x = 1\ny = 2  # unsaved\n",
        "newText": "x = 1\ny = 3\n",
    }
    assert report["writes"] == [[str(workspace / "a.py"), "x = 1\ny = 3\n"]]
    updates = report["updates"]
    kinds = [u["kind"] for u in updates if u["sessionUpdate"] == "tool_call"]
    assert kinds == ["read", "read"] + ["execute"] * 5 + ["edit"]
    assert any(u["sessionUpdate"] == "usage_update" for u in updates)
    assert report["listed"] == [[report["session"], "read both"]]
    assert report["firstExit"] == report["secondExit"] == 0
    replayed = report["replayed"]
    assert replayed.count("user_message_chunk") == 8 and replayed.count("tool_call") == 8
