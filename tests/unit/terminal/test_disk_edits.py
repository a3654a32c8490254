"""Applying a WorkspaceEdit to disk, as ``tether ask`` does for ``workspace/applyEdit``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from lsprotocol import types

from tether.terminal.disk_edits import Lines, apply_text_edits, apply_workspace_edit
from tether.tools.atomic import write_atomically


def edit(line: int, char: int, end_line: int, end_char: int, new: str) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(types.Position(line, char), types.Position(end_line, end_char)),
        new_text=new,
    )


def test_several_edits_in_one_file_all_refer_to_the_original_text() -> None:
    text = "alpha\nbeta\ngamma\n"
    edits = [
        edit(2, 0, 2, 5, "GAMMA"),  # given out of order on purpose
        edit(0, 0, 0, 5, "first line grows longer\nand splits"),
        edit(1, 0, 1, 0, ">> "),
    ]

    assert apply_text_edits(text, edits) == (
        "first line grows longer\nand splits\n>> beta\nGAMMA\n"
    )


def test_inserts_at_one_position_keep_their_order() -> None:
    assert apply_text_edits("x", [edit(0, 1, 0, 1, "a"), edit(0, 1, 0, 1, "b")]) == "xab"


def test_overlapping_edits_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("0123456789")
    change = types.WorkspaceEdit(
        changes={target.as_uri(): [edit(0, 0, 0, 5, "x"), edit(0, 3, 0, 8, "y")]}
    )

    result = apply_workspace_edit(change)

    assert not result.applied and "overlapping" in (result.failure_reason or "")
    assert target.read_text() == "0123456789"


def test_utf16_positions_count_an_emoji_as_two_units() -> None:
    text = "a😀b = 1\n"  # 😀 is outside the BMP: two UTF-16 code units
    # "b" starts at UTF-16 character 3, string index 2.
    assert Lines(text).offset(types.Position(0, 3)) == 2
    assert apply_text_edits(text, [edit(0, 3, 0, 4, "c")]) == "a😀c = 1\n"
    # Where the server negotiated another encoding: four bytes in UTF-8, one code point in UTF-32.
    assert apply_text_edits(text, [edit(0, 5, 0, 6, "c")], "utf-8") == "a😀c = 1\n"
    assert Lines(text).offset(types.Position(0, 2), "utf-32") == 2


def test_positions_past_a_line_end_or_the_last_line_clamp() -> None:
    lines = Lines("ab\r\ncd")
    assert lines.offset(types.Position(0, 99)) == 2  # before the \r\n
    assert lines.offset(types.Position(1, 1)) == 5
    assert lines.offset(types.Position(7, 0)) == 6


def test_crlf_files_keep_their_line_endings(tmp_path: Path) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\n")
    change = types.WorkspaceEdit(changes={target.as_uri(): [edit(1, 0, 1, 3, "TWO")]})

    assert apply_workspace_edit(change).applied
    assert target.read_bytes() == b"one\r\nTWO\r\n"


def test_document_changes_create_a_file_then_edit_it(tmp_path: Path) -> None:
    created = tmp_path / "pkg" / "new.py"
    existing = tmp_path / "old.py"
    existing.write_text("x = 1\n")
    change = types.WorkspaceEdit(
        document_changes=[
            types.CreateFile(uri=created.as_uri()),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(created.as_uri(), None),
                edits=[edit(0, 0, 0, 0, "print('hi')\n")],
            ),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(existing.as_uri(), 3),
                edits=[
                    types.AnnotatedTextEdit(
                        annotation_id="a", range=edit(0, 4, 0, 5, "").range, new_text="2"
                    )
                ],
            ),
        ]
    )

    assert apply_workspace_edit(change) == types.ApplyWorkspaceEditResult(applied=True)
    assert created.read_text() == "print('hi')\n"
    assert existing.read_text() == "x = 2\n"


def test_document_changes_win_over_changes(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("a")
    change = types.WorkspaceEdit(
        changes={target.as_uri(): [edit(0, 0, 0, 1, "from changes")]},
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(target.as_uri(), None),
                edits=[edit(0, 0, 0, 1, "from documentChanges")],
            )
        ],
    )

    assert apply_workspace_edit(change).applied
    assert target.read_text() == "from documentChanges"


def test_creating_an_existing_file_is_refused_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("keep me")
    create = types.CreateFile(uri=target.as_uri())

    refused = apply_workspace_edit(types.WorkspaceEdit(document_changes=[create]))
    ignored = types.CreateFile(
        uri=target.as_uri(), options=types.CreateFileOptions(ignore_if_exists=True)
    )

    assert not refused.applied and refused.failed_change == 0
    assert "already exists" in (refused.failure_reason or "")
    assert apply_workspace_edit(types.WorkspaceEdit(document_changes=[ignored])).applied
    assert target.read_text() == "keep me"


def test_a_refused_change_leaves_earlier_changes_unwritten(tmp_path: Path) -> None:
    first = tmp_path / "first.txt"
    first.write_text("before")
    change = types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(first.as_uri(), None),
                edits=[edit(0, 0, 0, 6, "after")],
            ),
            types.DeleteFile(uri=first.as_uri()),
        ]
    )

    result = apply_workspace_edit(change)

    assert not result.applied and result.failed_change == 1
    assert "delete" in (result.failure_reason or "")
    assert first.read_text() == "before"


def test_editing_a_missing_file_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    result = apply_workspace_edit(
        types.WorkspaceEdit(changes={missing.as_uri(): [edit(0, 0, 0, 0, "x")]})
    )
    assert not result.applied and "does not exist" in (result.failure_reason or "")
    assert not missing.exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and inodes")
def test_atomic_write_replaces_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "script.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    before = target.stat().st_ino
    reader = target.open()  # a reader holding the old file sees the old text

    write_atomically(target, "new\n")

    assert target.read_text() == "new\n"
    assert target.stat().st_ino != before  # replaced, not rewritten in place
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert reader.read() == "old\n"
    reader.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.sh"]  # no temp file left


def test_a_failed_atomic_write_leaves_the_original_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("original")

    with pytest.raises(UnicodeEncodeError):
        write_atomically(target, "bad \udc80 surrogate")

    assert target.read_text() == "original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
