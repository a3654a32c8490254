from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter, ValidationError

from tether.models import MAX_TOKENS, ToolCall, Usage

SENT = TypeAdapter(object)  # what the LSP front does to a call's arguments


def test_a_lone_surrogate_in_a_key_is_escaped_so_the_call_can_be_sent() -> None:
    # Found by tool-fuzz: {"path": {"\ud800": 1}} made the `tool_call` update and the
    # session's history unsendable (UnicodeEncodeError), and the turn ended in an error.
    raw = '{"path": {"\\ud800": 1, "ok": ["\\ud800"]}, "\\udce9": 2, "é": 3}'
    shown = ToolCall(id="c", name="fs-read", arguments=raw).parsed_arguments()
    assert shown == {"path": {"\\ud800": 1, "ok": ["\ud800"]}, "\\udce9": 2, "é": 3}
    json.dumps(SENT.dump_python(shown, mode="json"))


@pytest.mark.parametrize("count", [-1, MAX_TOKENS + 1, 2**63])
def test_a_token_count_past_any_model_is_refused_before_it_is_stored(count: int) -> None:
    # A reply's usage is stored, summed into the stats and sent to the editor, whose
    # numbers are exact only up to 2**53.
    with pytest.raises(ValidationError):
        Usage(input_tokens=count)
    with pytest.raises(ValidationError):
        Usage(output_tokens=count)
    assert Usage(input_tokens=MAX_TOKENS).input_tokens * 2**20 < 2**53
