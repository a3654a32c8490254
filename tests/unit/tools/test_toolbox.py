"""The toolbox: every session's tools, a session's own tools in its view only, and a
source's tools removed without touching another source's."""

from __future__ import annotations

from tests.support.doubles import EchoTool
from tether.tools.toolbox import Toolbox


def named(name: str) -> EchoTool:
    tool = EchoTool()
    tool.name = name
    return tool


def test_remove_takes_only_the_source_s_tools_never_a_same_named_one_it_lost_to() -> None:
    # Server "a__b" and server "a" with a tool "b__c" both make the name mcp__a__b__c.
    kept, lost, other = named("mcp__a__b__c"), named("mcp__a__b__c"), named("mcp__a__d")
    box = Toolbox([named("read")])
    box.add([kept], source="mcp:a__b")
    box.add([lost, other], source="mcp:a")

    box.remove("mcp:a")

    assert box["mcp__a__b__c"] is kept and box.source("mcp__a__b__c") == "mcp:a__b"
    assert sorted(box) == ["mcp__a__b__c", "read"]


def test_a_session_s_own_tools_are_in_its_view_only() -> None:
    box = Toolbox([named("read")])
    box.add([named("mcp__ed__look")], source="mcp:ed", session="s1")

    mine, theirs = box.view("s1"), box.view("s2")

    assert sorted(mine) == ["mcp__ed__look", "read"] and len(mine) == 2
    assert mine.source("mcp__ed__look") == "mcp:ed" and mine.owner == "s1"
    assert "mcp__ed__look" not in theirs and theirs.get("mcp__ed__look") is None
    assert list(theirs) == ["read"] and theirs.owner is None
    assert "mcp__ed__look" not in box  # the workspace's own tools (tether.tools, LSP)
    assert list(box.view(None)) == ["read"]


def test_two_sessions_may_each_have_a_server_of_one_name() -> None:
    box = Toolbox()
    first, second = named("mcp__ed__look"), named("mcp__ed__look")
    box.add([first], source="mcp:ed", session="s1")
    box.add([second], source="mcp:ed", session="s2")
    assert box.view("s1")["mcp__ed__look"] is first
    assert box.view("s2")["mcp__ed__look"] is second

    box.remove("mcp:ed", session="s1")

    assert "mcp__ed__look" not in box.view("s1") and box.view("s1").owner is None
    assert box.view("s2")["mcp__ed__look"] is second


def test_the_workspace_s_tool_wins_a_name_a_session_s_own_tool_has_too() -> None:
    box = Toolbox()
    own, settings = named("mcp__x__t"), named("mcp__x__t")
    box.add([own], source="mcp:x", session="s1")
    box.add([settings], source="mcp:x")
    view = box.view("s1")
    assert view["mcp__x__t"] is settings and list(view) == ["mcp__x__t"] and len(view) == 1


def test_a_view_follows_the_toolbox_and_every_change_is_counted() -> None:
    box = Toolbox()
    view = box.view("s1")  # taken before the session's server listed its tools
    box.add([named("mcp__ed__look")], source="mcp:ed", session="s1")
    assert "mcp__ed__look" in view and view.version == box.version == 1
    box.remove("mcp:ed", session="s2")  # another session's: nothing changes
    assert box.version == 1
    box.remove("mcp:ed", session="s1")
    assert "mcp__ed__look" not in view and box.version == 2
