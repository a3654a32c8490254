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
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    ValidationError,
)

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
    # A trigram index of the workspace (in state_dir) that narrows index-grep once built.
    index: bool = True


class TurnSettings(Section):
    tool_budget: int = Field(default=64, ge=1)
    repeat_limit: int = Field(default=4, ge=2)
    max_requests: int = Field(default=100, ge=1)
    context_tokens: int = Field(default=100_000, ge=200)
    compact_at: float = Field(default=0.8, gt=0, le=1)
    keep_rounds: int = Field(default=4, ge=1)


class ApprovalSettings(Section):
    dialogs: bool = True
    # ask: every command asks; sandboxed: a command that runs in the sandbox with no
    # widened rights runs without a dialog.
    commands: Literal["ask", "sandboxed"] = "ask"


class SandboxSettings(Section):
    mode: Literal["auto", "required", "off"] = "auto"
    network: bool = False  # every command may reach the network
    git_writable: bool = False  # commands may write the workspace's .git/
    read_paths: list[str] = Field(default_factory=list)  # shown read-only, even in $HOME
    write_paths: list[str] = Field(default_factory=list)  # writable, even in $HOME


class CheckpointSettings(Section):
    max_file_mb: float = Field(default=10.0, gt=0)  # larger files are skipped (and listed)
    keep_days: float = Field(default=14.0, gt=0)  # older checkpoints are pruned at start


class McpServer(BaseModel):
    """What every MCP server entry may say: whether its read-only hints are believed, which
    of its tools are offered, and how long one call may take."""

    model_config = ConfigDict(extra="forbid")
    trusted: bool = False  # only then does a tool's `readOnlyHint: true` skip the dialog
    enabled_tools: list[str] | None = None  # None: every tool it lists
    disabled_tools: list[str] = Field(default_factory=list)
    timeout_s: float = Field(default=60.0, gt=0)

    def offers(self, tool: str) -> bool:
        listed = self.enabled_tools is None or tool in self.enabled_tools
        return listed and tool not in self.disabled_tools


def _no_list_for_a_map(value: Any) -> Any:
    """An empty Lua table reaches us as ``[]``: Neovim cannot tell an empty map from a list."""
    return {} if value == [] else value


StringMap = Annotated[dict[str, str], BeforeValidator(_no_list_for_a_map)]


class McpStdioServer(McpServer):
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: StringMap = Field(default_factory=dict)
    cwd: str | None = None


class McpHttpServer(McpServer):
    url: str = Field(min_length=1)
    headers: StringMap = Field(default_factory=dict)


McpServerSettings = McpStdioServer | McpHttpServer


class McpSettings(Section):
    # A server's name is part of its tools' names (`mcp__NAME__TOOL`): letters, digits, - _.
    servers: dict[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,32}$")],
        McpServerSettings,
    ] = Field(default_factory=dict)


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
