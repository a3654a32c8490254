"""Model providers: one OpenAI-compatible implementation serves most local and hosted
models; the Anthropic Messages API has its own. Both share ``streaming.HTTPProvider``."""

from __future__ import annotations

from typing import assert_never

from tether.config import ProviderSettings
from tether.providers.base import Provider


def make_provider(settings: ProviderSettings) -> Provider:
    # Imported here: importing `providers.base` must not load httpx at server start.
    from tether.providers.anthropic import AnthropicProvider
    from tether.providers.openai import OpenAIProvider

    match settings.kind:
        case "openai":
            return OpenAIProvider(settings)
        case "anthropic":
            return AnthropicProvider(settings)
        case unknown:
            assert_never(unknown)
