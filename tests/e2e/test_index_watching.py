"""The workspace index without the editor's file watcher: where the client does not answer
the watcher's registration, tether watches the files itself and the index still answers;
and a change tether made itself is never missed by the next search, whatever the
watcher's latency."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Editor, launch, server_env
from tests.e2e.test_index import grep, indexed
from tests.e2e.test_index import launch as launch_watching
from tests.support.provider_stub import ProviderStub, text, tool_calls


async def found_soon(editor: Editor, stub: ProviderStub, pattern: str, seconds: float = 10) -> str:
    """index-grep's answer once it finds something (a watcher tells within moments)."""
    async with asyncio.timeout(seconds):
        while "no matches" in (answer := await grep(editor, stub, pattern)):
            await asyncio.sleep(0.2)
    return answer


@pytest.mark.skipif(sys.platform != "linux", reason="inotify: a hard link's writes go unseen")
async def test_without_the_editors_watcher_tether_watches_and_the_index_answers(
    editors: list[Editor], stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("old_marker_h = 1\n")
    # The test client declares dynamic registration but answers none: tether's own watch.
    editor = await launch(workspace, server_env(stub, home))
    editors.append(editor)
    assert (await indexed(editor))[-1].message == "indexed 1 files"
    assert "a.py:1: old_marker_h = 1" in await grep(editor, stub, "old_marker_h")

    # Proof that the index answers (not ripgrep over everything): a write through a hard
    # link outside the workspace reaches no watch of it, and the index, which has not
    # read it, leaves a.py out of the search.
    outside = tmp_path / "outside-link.py"
    os.link(workspace / "a.py", outside)
    outside.write_text("new_marker_h = 1\n")
    assert "no matches" in await grep(editor, stub, "new_marker_h")

    # A file written behind the editor's back: tether's watch tells the index.
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.py").write_text("behind_marker_h = 2\n")
    assert "sub/b.py:1: behind_marker_h = 2" in await found_soon(editor, stub, "behind_marker_h")
    (workspace / "sub" / "b.py").unlink()
    async with asyncio.timeout(10):
        while "no matches" not in await grep(editor, stub, "behind_marker_h"):
            await asyncio.sleep(0.2)


async def test_a_file_a_command_wrote_is_found_by_the_very_next_search(
    editors: list[Editor], stub: ProviderStub, workspace: Path, home: Path
) -> None:
    # The editor's watcher is registered, and it tells nothing of the command's write (this
    # test client sends no didChangeWatchedFiles): only the catch-up after the command can
    # make the next search see it.
    (workspace / "a.py").write_text("a = 1\n")
    editor = await launch_watching(workspace, server_env(stub, home))
    editors.append(editor)
    await indexed(editor)
    stub.script(
        tool_calls(("command", {"command": "echo fresh_from_command_h > made.txt"})),
        tool_calls(("index-grep", {"pattern": "fresh_from_command_h"})),
        text("done"),
    )
    editor.answers = ["Allow"]
    await editor.run("make a file, then search it")
    answers = [m["content"] for m in stub.requests[-1]["messages"] if m["role"] == "tool"]
    assert "made.txt:1: fresh_from_command_h" in answers[-1]
