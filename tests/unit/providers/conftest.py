"""The ``wire`` fixture: each test that takes it runs once per wire format."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import anthropic_stub, provider_stub
from tests.unit.providers.wires import Wire


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    if request.param == "openai":
        with provider_stub.ProviderStub() as stub:
            yield Wire(
                "openai", stub, provider_stub, "/chat/completions", before_text=1,
                key_variable="OPENAI_API_KEY",
                cut_off_hint="the model's output limit or context window on the server is "
                "too small for it",
            )  # fmt: skip
    else:
        with anthropic_stub.AnthropicStub() as stub:
            yield Wire(
                "anthropic", stub, anthropic_stub, "/v1/messages", before_text=3,
                key_variable="ANTHROPIC_API_KEY",
                cut_off_hint="raise tether.provider.max_tokens (now 8192)",
            )  # fmt: skip
