"""A reply's text reaches the editor as it streams, its deltas coalesced: a model that
sends a character at a time costs the editor one notification per 16 ms, not one each."""

from __future__ import annotations

from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, text


async def test_text_deltas_arriving_together_are_sent_as_one(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    answer = "one character at a time, " * 8
    stub.script(text(answer, chunk_size=1))
    editor = await start_editor()

    result = await editor.run("say it")

    assert result["answer"] == answer
    kinds = [u["kind"] for u in editor.updates]
    deltas = [u["text"] for u in editor.updates if u["kind"] == "text"]
    assert "".join(deltas) == answer
    assert len(deltas) < len(answer) // 4  # far fewer notifications than pieces
    last_text = max(i for i, kind in enumerate(kinds) if kind == "text")
    assert kinds.index("usage") > last_text  # all of the text before what followed it
