"""Bad tool calls become results the model can read, and the turn goes on."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls


async def test_every_bad_call_is_answered_and_the_turn_goes_on(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    editor = await start_editor()
    ws = editor.workspace
    (tmp_path / "secret.txt").write_text("outside")
    (ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    (ws / "big.txt").write_bytes(b"line of text\n" * 2_000_000)  # 26 MB: over the hard cap
    stub.script(
        tool_calls(
            ("no-such-tool", {"path": "a"}),
            ("fs-read", '{"path": "a.txt"'),  # malformed JSON
            ("fs-read", {"offset": 3}),  # missing path
            ("fs-read", {"path": "a.txt", "bogus": 1}),  # unknown argument
            ("fs-read", {"path": "../secret.txt"}),  # outside the workspace
            ("fs-read", {"path": "missing.txt"}),
            ("fs-read", {"path": "image.png"}),
            ("fs-read", {"path": "big.txt"}),
            ("fs-list", {"path": "missing-dir"}),
        ),
        text("I adapted."),
    )

    editor.answers = ["Deny"]  # the read outside the workspace asks first

    result = await editor.run("try everything")

    assert result["status"] == "done" and result["answer"] == "I adapted."
    answers = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    calls = next(m for m in stub.requests[1]["messages"] if m["role"] == "assistant")
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls["tool_calls"]]
    unknown, malformed, missing_arg, extra_arg, outside, absent, binary, big, no_dir = (
        a["content"] for a in answers
    )
    assert "unknown tool 'no-such-tool'" in unknown and "fs-read" in unknown
    assert "not valid JSON" in malformed
    assert "path" in missing_arg and "required" in missing_arg.lower()
    assert "bogus" in extra_arg
    assert "denied" in outside and "secret.txt" in editor.dialogs[0]
    assert "no such file" in absent.lower()
    assert "binary" in binary.lower()
    assert "large" in big.lower()
    assert "missing-dir" in no_dir

    history = await editor.history(result["session"])
    statuses = [m["status"] for m in history["messages"] if m["role"] == "tool"]
    assert statuses == [
        "error",
        "error",
        "error",
        "error",
        "denied",
        "error",
        "error",
        "error",
        "error",
    ]
