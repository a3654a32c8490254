"""The three-way undo of one file: the turn's hunks go, the person's stay."""

from __future__ import annotations

from tether.checkpoints.undo import Conflict, Keep, Remove, Write, undo

BEFORE = b"one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
AFTER = BEFORE.replace(b"two", b"TWO")


def test_the_turns_hunk_goes_and_the_persons_later_hunk_stays() -> None:
    now = AFTER.replace(b"six", b"SIX")
    assert undo(now, AFTER, BEFORE) == Write(BEFORE.replace(b"six", b"SIX"))


def test_an_edit_on_the_turns_lines_is_a_conflict() -> None:
    outcome = undo(AFTER.replace(b"TWO", b"TWO!"), AFTER, BEFORE)
    assert isinstance(outcome, Conflict) and "lines 2" in outcome.reason


def test_a_created_file_is_removed_only_while_unchanged() -> None:
    assert undo(b"new\n", b"new\n", None) == Remove()
    assert isinstance(undo(b"new, edited\n", b"new\n", None), Conflict)
    assert undo(None, b"new\n", None) == Keep()


def test_a_deleted_file_comes_back_unless_it_was_made_again() -> None:
    assert undo(None, None, BEFORE) == Write(BEFORE)
    assert isinstance(undo(b"other\n", None, BEFORE), Conflict)


def test_a_file_already_as_before_is_left_alone() -> None:
    assert undo(BEFORE, AFTER, BEFORE) == Keep()


def test_binary_files_are_never_merged() -> None:
    assert isinstance(undo(b"\0x", b"\0y", b"\0z"), Conflict)
    assert undo(b"\0y", b"\0y", b"\0z") == Write(b"\0z")
