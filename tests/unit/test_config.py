"""Settings: defaults, environment, editor layers; clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config import Settings
from tether.errors import ConfigError


def test_every_key_has_a_default() -> None:
    settings = Settings.load({})
    assert settings.provider.kind == "openai" and settings.provider.model is None
    assert settings.provider.resolved_base_url() == "https://api.openai.com/v1"
    assert settings.tools.max_concurrency == 8
    assert (settings.turn.tool_budget, settings.turn.repeat_limit) == (64, 4)
    assert settings.approval.dialogs is True
    assert settings.state_dir.name == "tether"


def test_environment_variables_as_the_contract_names_them() -> None:
    settings = Settings.load(
        {
            "TETHER_PROVIDER": "openai",
            "TETHER_BASE_URL": "http://127.0.0.1:11434/v1/",
            "TETHER_MODEL": "qwen",
            "OPENAI_API_KEY": "sk-fallback",
            "TETHER_HOME": "/tmp/th",
        }
    )
    assert settings.provider.resolved_base_url() == "http://127.0.0.1:11434/v1"
    assert settings.provider.model == "qwen"
    assert settings.provider.api_key is not None
    assert settings.provider.api_key.get_secret_value() == "sk-fallback"
    assert settings.state_dir == Path("/tmp/th")
    assert "sk-fallback" not in repr(settings) and "sk-fallback" not in str(settings.model_dump())


def test_tether_api_key_wins_and_anthropic_falls_back_to_its_own_variable() -> None:
    both = {"TETHER_API_KEY": "sk-tether", "OPENAI_API_KEY": "sk-openai"}
    key = Settings.load(both).provider.api_key
    assert key is not None and key.get_secret_value() == "sk-tether"
    anthropic = Settings.load({"TETHER_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant"})
    key = anthropic.provider.api_key
    assert key is not None and key.get_secret_value() == "sk-ant"


def test_later_sources_win() -> None:
    env = {"TETHER_MODEL": "from-env", "TETHER_API_KEY": "sk-env"}
    init = {"provider": {"model": "from-init"}, "turn": {"tool_budget": 10}}
    settings = Settings.load(env, init)
    assert settings.provider.model == "from-init" and settings.turn.tool_budget == 10
    changed = settings.with_layer({"turn": {"repeat_limit": 6}})
    assert (changed.turn.tool_budget, changed.turn.repeat_limit) == (10, 6)
    assert changed.provider.model == "from-init"
    assert changed.provider.api_key is not None
    assert changed.provider.api_key.get_secret_value() == "sk-env"


def test_bad_values_are_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match="tool_budget"):
        Settings.load({}, {"turn": {"tool_budget": 0}})
    with pytest.raises(ConfigError, match="kind"):
        Settings.load({"TETHER_PROVIDER": "nonsense"})
