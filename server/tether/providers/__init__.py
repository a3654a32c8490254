"""Model providers: one OpenAI-compatible implementation serves most local and hosted
models; the Anthropic Messages API has its own. Both share ``streaming.HTTPProvider``."""

from __future__ import annotations

from typing import assert_never

from tether.config import ProviderSettings
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Provider
from tether.providers.openai import OpenAIProvider


def make_provider(settings: ProviderSettings) -> Provider:
    match settings.kind:
        case "openai":
            return OpenAIProvider(settings)
        case "anthropic":
            return AnthropicProvider(settings)
        case unknown:
            assert_never(unknown)
