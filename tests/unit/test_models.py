from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import TypeAdapter, ValidationError

from tether.models import MAX_TOKENS, ToolCall, Usage, parse_arguments

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


@pytest.mark.parametrize(
    "text",
    [
        '{"path": "' + "a" * 64,  # a string cut short: was 2**64 steps of the regex
        '{"path": "' + '\\"' * 200_000,  # a quote at every other character, never closed
        '{"path": "' + "a" * 8_000_000 + '"}',
    ],
    ids=["cut", "escaped-quotes", "megabytes"],
)
def test_the_depth_of_any_arguments_is_measured_in_one_pass(text: str) -> None:
    # Found by tool-fuzz (long run): a call whose arguments were cut inside a string held
    # the server's event loop for good (the depth check backtracked exponentially).
    # Measured in a child, so a regression fails instead of hanging the tests.
    check = "import sys; from tether.models import ToolCall; " + (
        "ToolCall(id='c', name='fs-read', arguments=sys.stdin.read()).parsed_arguments()"
    )
    subprocess.run([sys.executable, "-c", check], input=text, text=True, timeout=20, check=True)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-2.5E+400"])
def test_a_number_json_cannot_carry_is_no_valid_arguments(number: str) -> None:
    # Python's reader takes them and no checking JSON writer gives them back: an Anthropic
    # session whose history held {"x": NaN} could send no request again (ValueError).
    raw = f'{{"path": "a.py", "limit": {number}}}'
    with pytest.raises(ValueError, match="JSON"):
        parse_arguments(raw)
    assert ToolCall(id="c", name="fs-read", arguments=raw).parsed_arguments() == raw
    assert parse_arguments('{"limit": 1.5e300}') == {"limit": 1.5e300}
