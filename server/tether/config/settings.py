"""The settings in force: one fully defaulted model, merged from the contract's sources,
and what was wrong with each source."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import BaseModel, Field, ValidationError

from tether.config.mcp import McpSettings
from tether.config.sections import (
    ApprovalSettings,
    CheckpointSettings,
    ProviderSettings,
    SandboxSettings,
    Section,
    ToolsSettings,
    TurnSettings,
)
from tether.errors import ConfigError
from tether.outbound import keep_secret

log = logging.getLogger(__name__)


def _default_state_dir() -> Path:
    return Path(platformdirs.user_state_dir()) / "tether"


class Settings(Section):
    provider: ProviderSettings = ProviderSettings()
    state_dir: Path = Field(default_factory=_default_state_dir)
    tools: ToolsSettings = ToolsSettings()
    turn: TurnSettings = TurnSettings()
    approval: ApprovalSettings = ApprovalSettings()
    sandbox: SandboxSettings = SandboxSettings()
    checkpoint: CheckpointSettings = CheckpointSettings()
    mcp: McpSettings = McpSettings()

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


ENV_NAMES = {
    ("provider", "kind"): "TETHER_PROVIDER",
    ("provider", "base_url"): "TETHER_BASE_URL",
    ("provider", "model"): "TETHER_MODEL",
    ("provider", "api_key"): "TETHER_API_KEY",
    ("state_dir",): "TETHER_HOME",
}
SOURCE_WORDS = {
    "env": "the environment",
    "init": "the editor's initializationOptions",
    "change": "the editor's settings (didChangeConfiguration)",
}


def load_leniently(
    env: Mapping[str, str], layers: Mapping[str, Mapping[str, Any]]
) -> tuple[Settings, list[str]]:
    """Settings from every source, later wins, and what was wrong with them.

    A bad value never discards the other settings: the key is named, with its source,
    and keeps the value the sources below it give (else its default); an unknown key is
    named and ignored.
    """
    sources: dict[str, Any] = {"env": from_env(env)}
    problems: list[str] = []
    for name, layer in layers.items():
        if isinstance(layer, Mapping):
            sources[name] = layer
        else:
            problems.append(f"{_where(name)} is not an object of settings; it is ignored")
    for name, layer in sources.items():
        problems += [
            f"unknown setting `{path}` in {_where(name)}; it is ignored"
            for path in _unknown(layer, Settings)
        ]
    for _ in range(64):  # each round drops at least one bad key
        merged: dict[str, Any] = {}
        for layer in sources.values():
            merged = _deep_merge(merged, layer)
        if isinstance(provider := merged.get("provider", {}), Mapping):
            merged["provider"] = choose_provider(provider, env)
        try:
            return Settings.model_validate(merged), problems
        except ValidationError as exc:
            for error in exc.errors():
                path = tuple(str(part) for part in error["loc"])
                source = _holder(sources, path)
                if source is None:  # a value no source gave (a key chosen from another)
                    return Settings(), [*problems, f"invalid tether settings: {exc}"]
                sources[source] = _without(sources[source], path)
                problems.append(_bad_value(path, source, error["msg"], error.get("input")))
    return Settings(), problems


def _where(source: str) -> str:
    return SOURCE_WORDS.get(source, source)


def _bad_value(path: tuple[str, ...], source: str, message: str, given: Any) -> str:
    key = ".".join(path)
    named = ENV_NAMES.get(path) if source == "env" else None
    what = f"`{named}` (setting `{key}`)" if named else f"setting `{key}`"
    shown = repr(given) if len(repr(given)) <= 60 else repr(given)[:59] + "…"
    return f"{what} in {_where(source)} is {shown}: {message}; it keeps its default or other value"


def _unknown(layer: Mapping[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    found: list[str] = []
    for key, value in layer.items():
        field = model.model_fields.get(key)
        if field is None:
            found.append(prefix + str(key))
        elif (
            isinstance(value, Mapping)
            and isinstance(field.annotation, type)
            and issubclass(field.annotation, BaseModel)
        ):
            found += _unknown(value, field.annotation, f"{prefix}{key}.")
    return found


def _holder(sources: Mapping[str, Any], path: tuple[str, ...]) -> str | None:
    """The last source that gives ``path`` (or a prefix of it, when a section is bad)."""
    for name in reversed(list(sources)):
        node: Any = sources[name]
        for depth, part in enumerate(path):
            if not isinstance(node, Mapping) or part not in node:
                break
            node = node[part]
            if depth == len(path) - 1 or not isinstance(node, Mapping):
                return name
    return None


def _without(layer: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    copy = dict(layer)
    head, rest = path[0], path[1:]
    if rest and isinstance(copy.get(head), Mapping):
        copy[head] = _without(copy[head], rest)
    else:
        copy.pop(head, None)
    return copy


class Configuration:
    """The settings in force, owned in one place, and the sources they are merged from.

    Every part of a server reads ``current`` when it needs a setting, so a change applies
    from the next use (a running turn keeps the settings it started with). A bad value
    is reported by its key and source, and never costs the other settings.
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        # A copy: the server takes the keys out of its own environment once read.
        self.env = dict(os.environ if env is None else env)
        self.layers: dict[str, Mapping[str, Any]] = {}
        self.pinned_state_dir: Path | None = None
        self.current, self.problems = load_leniently(self.env, {})
        self._keep_key_secret()

    def _keep_key_secret(self) -> None:
        key = self.current.provider.api_key
        keep_secret(key.get_secret_value() if key else None)

    def set_layer(self, name: str, layer: Mapping[str, Any]) -> ConfigError | None:
        """Replace one source (``init``, ``change``) and reload from every source, so a new
        provider kind picks its own key variable and never carries another vendor's over.

        What was wrong (every problem of every source, the environment's too) comes back
        as one ``ConfigError`` to report; the settings apply all the same."""
        self.layers[name] = layer
        settings, self.problems = load_leniently(self.env, self.layers)
        if self.pinned_state_dir is not None and settings.state_dir != self.pinned_state_dir:
            log.warning("state_dir changes take effect when tether restarts")
            settings = settings.model_copy(update={"state_dir": self.pinned_state_dir})
        self.current = settings
        self._keep_key_secret()
        return ConfigError("; ".join(self.problems)) if self.problems else None

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
