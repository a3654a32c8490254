"""Settings: one fully defaulted model, merged from the contract's sources.

Later sources win: defaults, environment variables, the editor's
``initializationOptions`` (``{"tether": {...}}``), then
``workspace/didChangeConfiguration`` (section ``tether``). Each section is a model of
its own (``sections``, ``mcp``); ``settings`` merges them and keeps the ones in force.
"""

from tether.config.mcp import (
    McpHttpServer,
    McpServer,
    McpServerSettings,
    McpSettings,
    McpStdioServer,
    StringMap,
)
from tether.config.sections import (
    DEFAULT_BASE_URLS,
    OLLAMA_BASE_URL,
    ApprovalSettings,
    CheckpointSettings,
    ProviderSettings,
    SandboxSettings,
    Section,
    ToolsSettings,
    TurnSettings,
)
from tether.config.settings import (
    ENV_NAMES,
    SOURCE_WORDS,
    Configuration,
    Settings,
    choose_provider,
    from_env,
    load_leniently,
)

__all__ = [
    "DEFAULT_BASE_URLS",
    "ENV_NAMES",
    "OLLAMA_BASE_URL",
    "SOURCE_WORDS",
    "ApprovalSettings",
    "CheckpointSettings",
    "Configuration",
    "McpHttpServer",
    "McpServer",
    "McpServerSettings",
    "McpSettings",
    "McpStdioServer",
    "ProviderSettings",
    "SandboxSettings",
    "Section",
    "Settings",
    "StringMap",
    "ToolsSettings",
    "TurnSettings",
    "choose_provider",
    "from_env",
    "load_leniently",
]
