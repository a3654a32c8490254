"""Settings: one fully defaulted model, merged from the contract's sources.

Later sources win: defaults, environment variables, the editor's
``initializationOptions`` (``{"tether": {...}}``), then
``workspace/didChangeConfiguration`` (section ``tether``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from tether.errors import ConfigError
from tether.outbound import keep_secret

log = logging.getLogger(__name__)
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
# Where an OpenAI-compatible provider with neither key nor address looks: a local Ollama.
OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"


class Section(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True)


class ProviderSettings(Section):
    kind: Literal["openai", "anthropic"] = "openai"
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    retry_base_s: float = Field(default=1.0, ge=0)
    retry_max_s: float = Field(default=30.0, ge=0)
    max_tokens: int = Field(default=8192, ge=1)

    def resolved_base_url(self) -> str:
        if self.base_url:
            return self.base_url.rstrip("/")
        return OLLAMA_BASE_URL if self.ollama_by_default() else DEFAULT_BASE_URLS[self.kind]

    def ollama_by_default(self) -> bool:
        """True when nothing chose a provider, so a local Ollama is all there is to try."""
        key = self.api_key.get_secret_value() if self.api_key else ""
        return self.kind == "openai" and not self.base_url and not key


class ToolsSettings(Section):
    max_concurrency: int = Field(default=8, ge=1)
    max_read_bytes: int = Field(default=100_000, ge=1_000)


class TurnSettings(Section):
    tool_budget: int = Field(default=64, ge=1)
    repeat_limit: int = Field(default=4, ge=2)
    max_requests: int = Field(default=100, ge=1)
    context_tokens: int = Field(default=100_000, ge=200)
    compact_at: float = Field(default=0.8, gt=0, le=1)
    keep_rounds: int = Field(default=4, ge=1)


class ApprovalSettings(Section):
    dialogs: bool = True


def _default_state_dir() -> Path:
    return Path(platformdirs.user_state_dir()) / "tether"


class Settings(Section):
    provider: ProviderSettings = ProviderSettings()
    state_dir: Path = Field(default_factory=_default_state_dir)
    tools: ToolsSettings = ToolsSettings()
    turn: TurnSettings = TurnSettings()
    approval: ApprovalSettings = ApprovalSettings()

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, *layers: Mapping[str, Any]) -> Settings:
        """Defaults, then ``env``, then each layer in order (later wins)."""
        env = os.environ if env is None else env
        merged: dict[str, Any] = from_env(env)
        for layer in layers:
            if not isinstance(layer, Mapping):
                raise ConfigError(f"invalid tether settings: expected an object, got {layer!r}")
            merged = _deep_merge(merged, layer)
        if isinstance(provider := merged.get("provider", {}), Mapping):
            merged["provider"] = choose_provider(provider, env)
        try:
            return cls.model_validate(merged)
        except ValueError as exc:
            raise ConfigError(f"invalid tether settings: {exc}") from exc


class Configuration:
    """The settings in force, owned in one place, and the sources they are merged from.

    Every part of a server reads ``current`` when it needs a setting, so a change applies
    from the next use (a running turn keeps the settings it started with). A layer that
    does not validate is reported and the last good settings stay.
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        # A copy: the server takes the keys out of its own environment once read.
        self.env = dict(os.environ if env is None else env)
        self.layers: dict[str, Mapping[str, Any]] = {}
        self.pinned_state_dir: Path | None = None
        try:
            self.current = Settings.load(self.env)
        except ConfigError:
            self.current = Settings()  # reported when a layer is set: it reloads from all
        self._keep_key_secret()

    def _keep_key_secret(self) -> None:
        key = self.current.provider.api_key
        keep_secret(key.get_secret_value() if key else None)

    def set_layer(self, name: str, layer: Mapping[str, Any]) -> ConfigError | None:
        """Replace one source (``init``, ``change``) and reload from every source, so a new
        provider kind picks its own key variable and never carries another vendor's over."""
        self.layers[name] = layer
        try:
            settings = Settings.load(self.env, *self.layers.values())
        except ConfigError as exc:
            return exc
        if self.pinned_state_dir is not None and settings.state_dir != self.pinned_state_dir:
            log.warning("state_dir changes take effect when tether restarts")
            settings = settings.model_copy(update={"state_dir": self.pinned_state_dir})
        self.current = settings
        self._keep_key_secret()
        return None

    def pin_state_dir(self) -> Path:
        """The store is open: its place no longer changes while this process runs."""
        self.pinned_state_dir = self.current.state_dir
        return self.pinned_state_dir


def from_env(env: Mapping[str, str]) -> dict[str, Any]:
    provider: dict[str, Any] = {}
    if kind := env.get("TETHER_PROVIDER"):
        provider["kind"] = kind
    if base_url := env.get("TETHER_BASE_URL"):
        provider["base_url"] = base_url
    if model := env.get("TETHER_MODEL"):
        provider["model"] = model
    if key := env.get("TETHER_API_KEY"):
        provider["api_key"] = key
    settings: dict[str, Any] = {"provider": provider} if provider else {}
    if home := env.get("TETHER_HOME"):
        settings["state_dir"] = home
    return settings


def choose_provider(given: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """The provider settings with the kind and key nobody chose filled in from ``env``.

    With no kind, key or address given, ``ANTHROPIC_API_KEY`` alone picks Anthropic;
    otherwise the kind is ``openai``. The key falls back to the kind's own variable.
    """
    chosen = dict(given)
    # By value, not by key: an editor may send its empty settings as null or "".
    unchosen = not any(chosen.get(name) for name in ("kind", "api_key", "base_url"))
    if unchosen and env.get("ANTHROPIC_API_KEY") and not env.get("OPENAI_API_KEY"):
        chosen["kind"] = "anthropic"
    fallback = "ANTHROPIC_API_KEY" if chosen.get("kind") == "anthropic" else "OPENAI_API_KEY"
    if not chosen.get("api_key") and (key := env.get(fallback)):
        chosen["api_key"] = key
    return chosen


def _deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
