"""Model providers: one OpenAI-compatible implementation serves most local and hosted models."""

from __future__ import annotations

from tether.config import ProviderSettings
from tether.errors import ConfigError
from tether.providers.base import Provider
from tether.providers.openai import OpenAIProvider


def make_provider(settings: ProviderSettings) -> Provider:
    if settings.kind == "openai":
        return OpenAIProvider(settings)
    raise ConfigError("the anthropic provider is not available yet; set TETHER_PROVIDER=openai")
