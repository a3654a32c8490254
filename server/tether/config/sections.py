"""The sections of tether's settings, one model each: the provider, the tools, a turn's
limits, approvals, the sandbox, checkpoints (the MCP servers' are in ``mcp.py``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

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
