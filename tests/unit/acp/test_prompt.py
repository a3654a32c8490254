"""An ACP prompt's blocks as tether's prompt text, and a call's places as ACP locations."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import audio_block, image_block, resource_block, resource_link_block, text_block
from acp.schema import BlobResourceContents

from tether.acp.calls import kind, locations
from tether.acp.prompt import Block, prompt_text, shown
from tether.errors import Refused
from tether.tools.builtin import builtin_tools

WORKSPACE = Path("/work/project")


def test_what_tether_cannot_read_is_named_never_dropped() -> None:
    blob = BlobResourceContents(
        uri="file:///work/project/logo.png", blob="AA==", mime_type="image/png"
    )
    blocks: list[Block] = [
        text_block("see"),
        resource_block(blob),
        image_block("AA==", "image/png"),
        audio_block("AA==", "audio/wav"),
    ]

    assert prompt_text(blocks, WORKSPACE).splitlines() == [
        "see",
        "[logo.png: image/png content tether cannot read]",
        "[an image was attached: tether cannot read images]",
        "[audio was attached: tether cannot hear it]",
    ]


def test_links_outside_the_workspace_stay_absolute_and_other_schemes_keep_their_name() -> None:
    blocks = [
        resource_link_block(name="x.py", uri="file:///elsewhere/x.py"),
        resource_link_block(name="issue 7", uri="https://example.com/issues/7"),
        resource_link_block(name="spaced", uri="file:///work/project/a%20b.py"),
    ]

    assert prompt_text(blocks, WORKSPACE).splitlines() == [
        "@/elsewhere/x.py",
        "@issue 7",
        "@a b.py",
    ]
    assert shown("file:///work/project/%00x", WORKSPACE) is None


def test_an_empty_prompt_is_refused() -> None:
    with pytest.raises(Refused, match="empty"):
        prompt_text([text_block("  \n")], WORKSPACE)


def test_a_prompt_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(Refused, match="not Unicode"):
        prompt_text([text_block("bad \ud800 text")], WORKSPACE)


def test_a_call_names_its_file_and_its_first_line_as_a_location() -> None:
    (read,) = locations(WORKSPACE, {"path": "src/a.py", "offset": 40}) or []
    (absolute,) = locations(WORKSPACE, {"path": "/etc/hosts"}) or []

    assert (read.path, read.line) == ("/work/project/src/a.py", 40)
    assert (absolute.path, absolute.line) == ("/etc/hosts", None)
    assert locations(WORKSPACE, {"command": "ls"}) is None
    assert locations(WORKSPACE, "not json") is None
    assert locations(WORKSPACE, {"path": "a\0b"}) is None


def test_every_builtin_tool_has_a_kind_of_its_own() -> None:
    assert [t.name for t in builtin_tools() if kind(t.name) == "other"] == []


def test_each_builtin_tool_has_its_acp_kind_and_others_are_other() -> None:
    assert [kind(t) for t in ("fs-read", "index-grep", "patch", "command", "mcp-thing")] == [
        "read",
        "search",
        "edit",
        "execute",
        "other",
    ]
