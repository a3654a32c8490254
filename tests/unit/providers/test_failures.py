"""What a new user is told when nothing is set up yet."""

from __future__ import annotations

import httpx
import pytest

from tether.config import Settings
from tether.errors import ConfigError, ProviderError
from tether.models import UserMessage
from tether.providers import make_provider
from tether.providers.base import ChatRequest
from tether.providers.openai import OpenAIProvider

ASK = ChatRequest(system="", messages=(UserMessage(content="hi"),))


async def test_nothing_reachable_at_the_ollama_default_lists_the_ways_to_fix_it() -> None:
    tried: list[str] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        tried.append(str(request.url))
        raise httpx.ConnectError("All connection attempts failed", request=request)

    fast = {"provider": {"retry_base_s": 0, "max_retries": 1}}
    settings = Settings.load({"TETHER_MODEL": "qwen2.5-coder"}, fast).provider
    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        provider = OpenAIProvider(settings, client)
        with pytest.raises(ProviderError) as caught:
            [event async for event in provider.stream(ASK)]
    message = str(caught.value)
    assert tried == ["http://127.0.0.1:11434/v1/chat/completions"] * 2
    assert "no local Ollama answers at http://127.0.0.1:11434/v1/chat/completions" in message
    assert "start Ollama (`ollama serve`) and set TETHER_MODEL" in message
    assert "set OPENAI_API_KEY and TETHER_MODEL" in message
    assert "set ANTHROPIC_API_KEY and TETHER_MODEL" in message
    assert "set TETHER_BASE_URL" in message


async def test_a_missing_model_says_to_set_tether_model_and_for_which_provider() -> None:
    async def failure(env: dict[str, str]) -> str:
        provider = make_provider(Settings.load(env).provider)
        with pytest.raises(ConfigError) as caught:
            [event async for event in provider.stream(ASK)]
        await provider.aclose()
        return str(caught.value)

    fresh = await failure({})
    assert "set TETHER_MODEL" in fresh and "Ollama at http://127.0.0.1:11434/v1" in fresh
    assert "OPENAI_API_KEY or ANTHROPIC_API_KEY" in fresh
    for env in ({"OPENAI_API_KEY": "sk-o"}, {"ANTHROPIC_API_KEY": "sk-a"}):
        configured = await failure(env)
        assert "set TETHER_MODEL" in configured and "Ollama" not in configured
