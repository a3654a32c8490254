from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.unit.tools import Buffers, bytes_name, call, context, summary, write
from tether.errors import ToolError
from tether.index.workspace import WorkspaceIndex
from tether.tools.atomic import write_atomically
from tether.tools.base import FileEdit, Replacement, TellsItsChanges, ToolContext
from tether.tools.command import Command
from tether.tools.patch import Patch, PatchParams, plan

PATCH = Patch()

APP = "import os\n\n\ndef main():\n    print('hi')\n    return 0\n"


class RecordingEditor:
    """An editor that records what it was asked to apply, and says whether it did."""

    def __init__(self, applies: bool) -> None:
        self.applies = applies
        self.applied: list[tuple[FileEdit, str]] = []

    async def apply(self, edit: FileEdit, label: str) -> bool:
        self.applied.append((edit, label))
        return self.applies


def params(**arguments: Any) -> PatchParams:
    return PatchParams.model_validate(arguments)


def with_editor(ctx: ToolContext, editor: RecordingEditor) -> ToolContext:
    return dataclasses.replace(ctx, editor=editor)


async def test_edits_replace_each_old_once_against_the_original_text(tmp_path: Path) -> None:
    app = write(tmp_path, "src/app.py", APP)
    edits = [
        {"old": "    return 0\n", "new": "    return 1\n"},
        {"old": "import os\n", "new": "import os\nimport sys\n"},
    ]
    out = await call(PATCH, context(tmp_path), path="src/app.py", edits=edits)
    assert app.read_text() == APP.replace("return 0", "return 1").replace(
        "import os\n", "import os\nimport sys\n"
    )
    assert out.splitlines()[0] == "edited src/app.py: 2 edits, +2 -1 lines (written to disk)"
    assert out.splitlines()[1].startswith("changed at: @@ -1,")


async def test_the_plan_has_sorted_offsets_into_the_original(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "one two three")
    edit = await plan(
        params(path="a.txt", edits=[{"old": "three", "new": "3"}, {"old": "one", "new": "1"}]),
        context(tmp_path),
    )
    assert edit.before == "one two three" and edit.after == "1 two 3"
    assert edit.replacements == [
        Replacement(start=0, end=3, new="1"),
        Replacement(start=8, end=13, new="3"),
    ]
    assert edit.path == (tmp_path / "a.txt").resolve()


async def test_an_ambiguous_old_is_refused_saying_how_often_it_occurs(tmp_path: Path) -> None:
    app = write(tmp_path, "src/app.py", "x = 1\nx = 1\nx = 1\ny = 2\n")
    edits = [{"old": "y = 2", "new": "y = 3"}, {"old": "x = 1", "new": "x = 2"}]
    with pytest.raises(ToolError) as failed:
        await call(PATCH, context(tmp_path), path="src/app.py", edits=edits)
    assert str(failed.value) == (
        "edit 2: `old` occurs 3 times in src/app.py; include more context to make it unique"
    )
    assert app.read_text() == "x = 1\nx = 1\nx = 1\ny = 2\n"  # nothing applied


async def test_overlapping_occurrences_count_as_ambiguous(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "aaa")
    with pytest.raises(ToolError, match="occurs 2 times"):
        await call(PATCH, context(tmp_path), path="a.txt", edits=[{"old": "aa", "new": "b"}])


async def test_a_missing_old_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", APP)
    with pytest.raises(ToolError, match=r"^edit 1: `old` not found in src/app.py; "):
        await call(
            PATCH, context(tmp_path), path="src/app.py", edits=[{"old": "absent", "new": "x"}]
        )


async def test_overlapping_edits_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "alpha beta gamma\n")
    edits = [{"old": "beta gamma", "new": "x"}, {"old": "alpha beta", "new": "y"}]
    with pytest.raises(ToolError, match=r"^edits 1 and 2 overlap in a.txt; merge them"):
        await call(PATCH, context(tmp_path), path="a.txt", edits=edits)


async def test_a_crlf_file_matches_an_old_written_with_lf(tmp_path: Path) -> None:
    file = write(tmp_path, "a.txt", b"one\r\ntwo\r\nthree\r\n")
    edits = [{"old": "one\ntwo\n", "new": "one\n2\n"}]
    await call(PATCH, context(tmp_path), path="a.txt", edits=edits)
    assert file.read_bytes() == b"one\r\n2\r\nthree\r\n"


async def test_edits_to_a_missing_file_say_to_use_content(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"no such file: new\.py; to create it, give `content`"):
        await call(PATCH, context(tmp_path), path="new.py", edits=[{"old": "a", "new": "b"}])


async def test_content_creates_a_file_and_its_directories(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert summary(PATCH, ctx, path="docs/notes/n.md", content="a\nb\n") == (
        "create docs/notes/n.md (2 lines)"
    )
    edit = await plan(params(path="docs/notes/n.md", content="a\nb\n"), ctx)
    assert edit.before is None and edit.replacements == [Replacement(start=0, end=0, new="a\nb\n")]
    out = await call(PATCH, ctx, path="docs/notes/n.md", content="a\nb\n")
    assert out == "created docs/notes/n.md: 2 lines (written to disk)"
    created = tmp_path / "docs/notes/n.md"
    assert created.read_text() == "a\nb\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(created.stat().st_mode) == 0o666 & ~umask


async def test_content_replaces_a_file_whole(tmp_path: Path) -> None:
    file = write(tmp_path, "README.md", "old\ntext\nkept\n")
    ctx = context(tmp_path)
    assert summary(PATCH, ctx, path="README.md", content="new\nkept\n") == (
        "replace README.md (2 lines)"
    )
    out = await call(PATCH, ctx, path="README.md", content="new\nkept\n")
    assert out == "replaced README.md: +1 -2 lines (written to disk)\nchanged at: @@ -1,3 +1,2 @@"
    assert file.read_text() == "new\nkept\n"


async def test_the_live_text_is_patched_in_the_editor_when_it_applies(tmp_path: Path) -> None:
    app = write(tmp_path, "app.py", "on disk\n")
    path = app.resolve()
    editor = RecordingEditor(applies=True)
    ctx = with_editor(context(tmp_path, Buffers({path: "unsaved = 1\n"})), editor)
    out = await call(PATCH, ctx, path="app.py", edits=[{"old": "1", "new": "2"}])
    assert out.startswith("edited app.py: 1 edit, +1 -1 lines (applied in the editor)")
    [(edit, label)] = editor.applied
    assert (edit.path, edit.before, edit.after) == (path, "unsaved = 1\n", "unsaved = 2\n")
    assert label == "edit app.py (1 edit, +1 -1)"
    assert app.read_text() == "on disk\n"  # the editor owns it now


async def test_the_live_text_is_written_to_disk_when_the_editor_cannot(tmp_path: Path) -> None:
    app = write(tmp_path, "app.py", "on disk\n")
    editor = RecordingEditor(applies=False)
    ctx = with_editor(context(tmp_path, Buffers({app.resolve(): "unsaved = 1\n"})), editor)
    out = await call(PATCH, ctx, path="app.py", edits=[{"old": "1", "new": "2"}])
    assert "(written to disk)" in out
    assert len(editor.applied) == 1
    assert app.read_text() == "unsaved = 2\n"


async def test_a_file_changed_after_planning_is_not_overwritten(tmp_path: Path) -> None:
    app = write(tmp_path, "app.py", "x = 1\n")

    class Meddler(RecordingEditor):
        async def apply(self, edit: FileEdit, label: str) -> bool:
            app.write_text("x = 1\nsomeone else's line\n")
            return False

    ctx = with_editor(context(tmp_path), Meddler(applies=False))
    with pytest.raises(ToolError, match=r"app\.py changed while the patch was being applied"):
        await call(PATCH, ctx, path="app.py", edits=[{"old": "1", "new": "2"}])
    assert app.read_text() == "x = 1\nsomeone else's line\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
async def test_the_atomic_write_keeps_the_mode_and_leaves_no_temporary(tmp_path: Path) -> None:
    script = write(tmp_path, "run.sh", "#!/bin/sh\necho old\n")
    script.chmod(0o750)
    await call(PATCH, context(tmp_path), path="run.sh", edits=[{"old": "old", "new": "new"}])
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_the_atomic_write_replaces_the_inode(tmp_path: Path) -> None:
    file = write(tmp_path, "a.txt", "old")
    inode = file.stat().st_ino
    write_atomically(file, "new ✓\r\n")
    assert file.read_bytes() == "new ✓\r\n".encode()
    assert file.stat().st_ino != inode  # renamed over, never rewritten in place


async def test_binary_files_and_directories_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "blob.bin", b"\x00\x01\x02")
    (tmp_path / "pkg").mkdir()
    ctx = context(tmp_path)
    with pytest.raises(ToolError, match=r"blob\.bin is a binary file"):
        await call(PATCH, ctx, path="blob.bin", content="text")
    with pytest.raises(ToolError, match="pkg is a directory"):
        await call(PATCH, ctx, path="pkg", content="text")


async def test_preview_is_a_short_unified_diff(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", APP)
    ctx = context(tmp_path)
    preview = await PATCH.preview(
        params(path="src/app.py", edits=[{"old": "'hi'", "new": "'hello'"}]), ctx, 2000
    )
    assert preview.whole and preview.text.splitlines() == [
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -2,5 +2,5 @@",
        " ",
        " ",
        " def main():",
        "-    print('hi')",
        "+    print('hello')",
        "     return 0",
    ]
    created = await PATCH.preview(params(path="new.md", content="# Title\n"), ctx, 2000)
    assert created.text.splitlines()[:3] == ["--- /dev/null", "+++ b/new.md", "@@ -0,0 +1 @@"]


async def test_a_long_preview_is_cut_and_says_so(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    preview = await PATCH.preview(params(path="big.txt", content="line\n" * 100), ctx, 2000)
    lines = preview.text.splitlines()
    assert not preview.whole and len(lines) == 41
    # 3 header lines + 100 added, 40 shown
    assert lines[-1] == "[the diff is cut: 63 more of its 103 lines not shown]"


async def test_a_preview_of_long_lines_is_cut_to_its_budget(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    preview = await PATCH.preview(params(path="min.js", content="x" * 5000), ctx, 2000)
    assert not preview.whole and len(preview.text) <= 2000


async def test_preview_of_a_patch_that_cannot_apply_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "text\n")
    with pytest.raises(ToolError, match="not found"):
        await PATCH.preview(
            params(path="a.txt", edits=[{"old": "nope", "new": ""}]), context(tmp_path), 2000
        )


def test_summary_rule_key_and_read_only(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    edits = [{"old": "a\nb", "new": "a\nc\nd"}, {"old": "x", "new": "y"}]
    assert summary(PATCH, ctx, path="src/app.py", edits=edits) == "edit src/app.py (2 edits, +3 -2)"
    memory = PATCH.rule_key(params(path="./src/../src/app.py", content=""), ctx)
    assert memory is not None and (memory.key, memory.words) == ("src/app.py", "edit src/app.py")
    assert not PATCH.read_only(params(path="a", content=""), ctx)


async def test_an_unchanged_result_writes_nothing(tmp_path: Path) -> None:
    file = write(tmp_path, "a.txt", "same\n")
    editor = RecordingEditor(applies=True)
    ctx = with_editor(context(tmp_path), editor)
    out = await call(PATCH, ctx, path="a.txt", content="same\n")
    assert out == "a.txt unchanged: the patch leaves its text as it is"
    assert editor.applied == [] and file.read_text() == "same\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "a", "edits": [{"old": "x", "new": "y"}], "content": "z"}, "not both"),
        ({"path": "a"}, "give either `edits`"),
        ({"path": "a", "edits": []}, "at least 1 item"),
        ({"path": "a", "edits": [{"old": "", "new": "y"}]}, "at least 1 character"),
        ({"path": "a", "content": "x", "extra": 1}, "Extra inputs"),
    ],
)
def test_edits_or_content_exactly_one_is_enforced(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PatchParams.model_validate(arguments)


# --- hostile paths: the planning reads judge the file when they run ---


async def test_a_patch_outside_the_workspace_is_previewed_without_reading_it(
    tmp_path: Path,
) -> None:
    """Planning it before the person decides would tell the model, by a "not found" error
    instead of a dialog, what the outside file holds."""
    write(tmp_path, "outside/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = context(ws)
    for path in ("../outside/id_rsa", str(tmp_path / "outside/id_rsa")):
        probe = params(path=path, edits=[{"old": "-----BEGIN OPENSSH", "new": "x"}])
        preview = await PATCH.preview(probe, ctx, 2000)
        assert not preview.whole
        assert preview.text.startswith(f"[{tmp_path / 'outside/id_rsa'} is outside the workspace")
        assert "PRIVATE KEY" not in preview.text
        miss = params(path=path, edits=[{"old": "no such text", "new": "x"}])
        assert (await PATCH.preview(miss, ctx, 2000)).text.startswith("[")  # no error either
    with pytest.raises(ToolError, match=r"now resolves outside the workspace"):
        await plan(params(path="../outside/id_rsa", content="x"), ctx)


async def test_a_patch_inside_git_is_previewed_without_reading_it(tmp_path: Path) -> None:
    write(tmp_path, ".git/config", "[remote]\n\turl = https://token@example.com\n")
    preview = await PATCH.preview(
        params(path=".git/config", content="[core]\n\tfsmonitor = evil\n"), context(tmp_path), 2000
    )
    assert preview.text.splitlines()[0] == (
        "[.git/config is inside .git/: its current text is read only once you allow this patch]"
    )
    assert "+\tfsmonitor = evil" in preview.text and "token" not in preview.text


async def test_an_approved_patch_outside_the_workspace_is_applied(tmp_path: Path) -> None:
    target = write(tmp_path, "outside/notes.txt", "old\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    patch = params(path="../outside/notes.txt", edits=[{"old": "old", "new": "new"}])
    out = await PATCH.run(patch, context(ws, approved=True))
    assert out.startswith(f"edited {target}") and target.read_text() == "new\n"


async def test_a_planning_read_refuses_a_file_swapped_outside(tmp_path: Path) -> None:
    write(tmp_path, "outside/id_rsa", "KEY\n")
    ws = tmp_path / "ws"
    write(ws, "docs/id_rsa", "placeholder\n")
    ctx = context(ws)
    patch = params(path="docs/id_rsa", edits=[{"old": "KEY", "new": "x"}])
    shutil.rmtree(ws / "docs")
    (ws / "docs").symlink_to(tmp_path / "outside")  # after it was planned, before it runs
    preview = await PATCH.preview(patch, ctx, 2000)
    assert preview.text.startswith(f"[{tmp_path / 'outside/id_rsa'} is outside the workspace")
    with pytest.raises(ToolError, match=r"docs/id_rsa now resolves outside the workspace"):
        await plan(patch, ctx)


@pytest.mark.timeout(10)
async def test_a_fifo_is_refused_promptly(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match=r"pipe is a FIFO"):
        await call(PATCH, context(tmp_path), path="pipe", content="x")


async def test_a_name_that_is_not_utf8_is_patched_by_its_escaped_name(tmp_path: Path) -> None:
    real = bytes_name(tmp_path, b"caf\xe9.txt", b"old\n")
    out = await call(
        PATCH, context(tmp_path), path="caf\\xe9.txt", edits=[{"old": "old", "new": "new"}]
    )
    assert out.startswith("edited caf\\xe9.txt: 1 edit, +1 -1 lines")
    assert real.read_text() == "new\n"
    memory = PATCH.rule_key(params(path="caf\\xe9.txt", content=""), context(tmp_path))
    assert memory is not None and memory.key == "caf\\xe9.txt"


async def test_a_patch_tells_the_index_the_file_it_wrote(tmp_path: Path) -> None:
    """No watcher here, and no catch-up (the dispatcher asks none after a patch): the next
    search finds the patched text because the patch told the index of its file."""
    ws = tmp_path / "ws"
    write(ws, "app.py", APP)
    index = WorkspaceIndex(ws.resolve(), tmp_path / "index.sqlite3")
    await index.build()
    index.follow()
    ctx = dataclasses.replace(context(ws), index=index)

    await call(PATCH, ctx, path="app.py", edits=[{"old": "print('hi')", "new": "patched_w()"}])
    await call(PATCH, ctx, path="new.py", content="created_w = 1\n")

    assert await index.candidates("patched_w", False) == [b"app.py"]
    assert await index.candidates("created_w", False) == [b"new.py"]
    assert isinstance(PATCH, TellsItsChanges) and not isinstance(Command(), TellsItsChanges)
    await index.close()
