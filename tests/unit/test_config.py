"""Settings: defaults, environment, editor layers; clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config import (
    Configuration,
    McpHttpServer,
    McpStdioServer,
    Settings,
    load_leniently,
)
from tether.errors import ConfigError


def test_every_key_has_a_default() -> None:
    settings = Settings.load({})
    assert settings.provider.kind == "openai" and settings.provider.model is None
    assert settings.provider.resolved_base_url() == "http://127.0.0.1:11434/v1"
    assert settings.provider.max_tokens == 8192
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
    changed = Settings.load(env, init, {"turn": {"repeat_limit": 6}})
    assert (changed.turn.tool_budget, changed.turn.repeat_limit) == (10, 6)
    assert changed.provider.model == "from-init"
    assert changed.provider.api_key is not None
    assert changed.provider.api_key.get_secret_value() == "sk-env"


def test_a_new_provider_kind_takes_its_own_key_never_the_old_vendors() -> None:
    env = {"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant", "TETHER_MODEL": "m"}
    assert Settings.load(env).provider.kind == "openai"
    switched = Settings.load(env, {}, {"provider": {"kind": "anthropic"}})
    assert switched.provider.api_key is not None
    assert switched.provider.api_key.get_secret_value() == "sk-ant"


def test_layers_that_are_not_objects_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="expected an object"):
        Settings.load({}, ["provider"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="provider"):
        Settings.load({}, {"provider": None})


def test_bad_values_are_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match="tool_budget"):
        Settings.load({}, {"turn": {"tool_budget": 0}})
    with pytest.raises(ConfigError, match="kind"):
        Settings.load({"TETHER_PROVIDER": "nonsense"})


# -- choosing a provider for a new user -----------------------------------------


def test_with_nothing_configured_the_provider_is_a_local_ollama() -> None:
    provider = Settings.load({"TETHER_MODEL": "qwen2.5-coder"}).provider
    assert provider.kind == "openai" and provider.api_key is None
    assert provider.resolved_base_url() == "http://127.0.0.1:11434/v1"
    assert provider.ollama_by_default()


def test_an_anthropic_key_alone_picks_anthropic() -> None:
    provider = Settings.load({"ANTHROPIC_API_KEY": "sk-ant"}).provider
    assert provider.kind == "anthropic"
    assert provider.resolved_base_url() == "https://api.anthropic.com"
    assert provider.api_key is not None and provider.api_key.get_secret_value() == "sk-ant"
    assert not provider.ollama_by_default()


def test_an_openai_key_picks_openai_itself() -> None:
    for env in ({"OPENAI_API_KEY": "sk-oa"}, {"OPENAI_API_KEY": "sk-oa", "ANTHROPIC_API_KEY": "a"}):
        provider = Settings.load(env).provider
        assert provider.kind == "openai"
        assert provider.resolved_base_url() == "https://api.openai.com/v1"
        assert provider.api_key is not None and provider.api_key.get_secret_value() == "sk-oa"


def test_a_chosen_kind_or_address_is_never_overridden_by_a_stray_key() -> None:
    local = Settings.load({"TETHER_BASE_URL": "http://gpu:8000/v1", "ANTHROPIC_API_KEY": "a"})
    # The Anthropic key is for Anthropic: it is not sent to another endpoint.
    assert (local.provider.kind, local.provider.api_key) == ("openai", None)
    chosen = Settings.load({"TETHER_PROVIDER": "openai", "ANTHROPIC_API_KEY": "a"}).provider
    assert chosen.kind == "openai" and chosen.resolved_base_url() == "http://127.0.0.1:11434/v1"
    generic = Settings.load({"TETHER_API_KEY": "sk-t", "ANTHROPIC_API_KEY": "a"}).provider
    assert generic.kind == "openai" and generic.resolved_base_url() == "https://api.openai.com/v1"


def test_the_editor_can_choose_the_kind_and_the_key_follows_it() -> None:
    env = {"OPENAI_API_KEY": "sk-oa", "ANTHROPIC_API_KEY": "sk-ant"}
    provider = Settings.load(env, {"provider": {"kind": "anthropic"}}).provider
    assert provider.kind == "anthropic"
    assert provider.api_key is not None and provider.api_key.get_secret_value() == "sk-ant"


def test_settings_an_editor_leaves_empty_choose_nothing() -> None:
    empty = {"provider": {"base_url": "", "api_key": None, "model": "m"}}
    provider = Settings.load({"ANTHROPIC_API_KEY": "sk-ant"}, empty).provider
    assert provider.kind == "anthropic"
    assert provider.resolved_base_url() == "https://api.anthropic.com"
    assert Settings.load({}, empty).provider.resolved_base_url() == "http://127.0.0.1:11434/v1"


# -- a bad value costs nothing else (contract v2) -------------------------------


def test_a_bad_value_is_named_and_keeps_every_other_setting() -> None:
    env = {"TETHER_PROVIDER": "opneai", "TETHER_MODEL": "m", "TETHER_HOME": "/tmp/tether-x"}
    layers = {"init": {"turn": {"tool_budget": "lots", "max_requests": 5}}}

    settings, problems = load_leniently(env, layers)

    assert (settings.provider.kind, settings.provider.model) == ("openai", "m")
    assert str(settings.state_dir) == "/tmp/tether-x"
    assert (settings.turn.tool_budget, settings.turn.max_requests) == (64, 5)
    assert len(problems) == 2
    assert problems[0].startswith("`TETHER_PROVIDER` (setting `provider.kind`) in the environment")
    assert "setting `turn.tool_budget` in the editor's initializationOptions" in problems[1]


def test_a_bad_value_in_a_later_source_falls_back_to_the_earlier_one() -> None:
    layers = {"init": {"turn": {"tool_budget": 10}}, "change": {"turn": {"tool_budget": -1}}}
    settings, problems = load_leniently({}, layers)
    assert settings.turn.tool_budget == 10
    assert problems and "didChangeConfiguration" in problems[0]


def test_unknown_keys_are_named_as_warnings() -> None:
    layers = {"init": {"providr": {"kind": "anthropic"}, "provider": {"modle": "x", "model": "m"}}}
    settings, problems = load_leniently({}, layers)
    assert settings.provider.model == "m"
    assert problems == [
        "unknown setting `providr` in the editor's initializationOptions; it is ignored",
        "unknown setting `provider.modle` in the editor's initializationOptions; it is ignored",
    ]


def test_the_configuration_applies_what_is_good_and_reports_the_rest() -> None:
    config = Configuration({"TETHER_MODEL": "m"})
    problem = config.set_layer("init", {"turn": {"tool_budget": "lots", "repeat_limit": 3}})
    assert problem is not None and "turn.tool_budget" in str(problem)
    assert (config.current.turn.tool_budget, config.current.turn.repeat_limit) == (64, 3)
    assert config.set_layer("init", {"turn": {"repeat_limit": 5}}) is None


def test_an_mcp_servers_empty_env_or_headers_may_come_as_an_empty_list() -> None:
    # Neovim sends an empty Lua table (`env = {}`) as [], which made the whole entry invalid.
    servers = {"a": {"command": "srv", "env": []}, "b": {"url": "http://h/mcp", "headers": []}}
    settings, problems = load_leniently({}, {"init": {"mcp": {"servers": servers}}})
    assert problems == []
    a, b = settings.mcp.servers["a"], settings.mcp.servers["b"]
    assert isinstance(a, McpStdioServer) and a.env == {}
    assert isinstance(b, McpHttpServer) and b.headers == {}
    with pytest.raises(ConfigError):
        Settings.load({}, {"mcp": {"servers": {"c": {"command": "srv", "env": ["X=1"]}}}})
