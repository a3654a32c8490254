"""Model providers: one OpenAI-compatible implementation serves most local and hosted
models; the Anthropic Messages API has its own. Both share ``streaming.HTTPProvider``."""

from __future__ import annotations

from typing import assert_never

from tether.config import ProviderSettings
from tether.providers.base import Provider


class Providers:
    """One provider, and its connection pool, for as long as its settings hold."""

    def __init__(self) -> None:
        self._current: tuple[ProviderSettings, Provider] | None = None
        self._retired: list[Provider] = []  # a running turn may still use one

    def get(self, settings: ProviderSettings) -> Provider:
        if self._current is None or self._current[0] != settings:
            if self._current is not None:
                self._retired.append(self._current[1])
            self._current = (settings, make_provider(settings))
        return self._current[1]

    async def aclose(self) -> None:
        current = [self._current[1]] if self._current else []
        for provider in [*self._retired, *current]:
            await provider.aclose()


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
