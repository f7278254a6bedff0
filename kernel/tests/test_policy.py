from hermes_kernel.config.controls import PluginSettings
from hermes_kernel.plugins.policy import PluginPolicy


def decide(name: str, environ=None, safe_mode=False, **config) -> tuple[bool, str]:
    policy = PluginPolicy.from_sources(
        PluginSettings.from_mapping(config), environ or {}, safe_mode
    )
    decision = policy.decide(name)
    return decision.enabled, decision.reason


def test_installed_plugins_load_by_default():
    assert decide("a") == (True, "installed")


def test_config_enabled_is_an_opt_in_list_and_disabled_blocks():
    assert decide("a", enabled=["b"]) == (False, "not in plugins.enabled in config.yaml")
    assert decide("b", enabled=["b"]) == (True, "plugins.enabled in config.yaml")
    assert decide("b", enabled=["b"], disabled=["b"]) == (False, "plugins.disabled in config.yaml")


def test_environment_beats_config():
    env = {"HERMES_LOAD_PLUGINS": "a, b"}
    assert decide("a", env, disabled=["a"]) == (True, "named in HERMES_LOAD_PLUGINS")
    assert decide("c", env) == (False, "not in HERMES_LOAD_PLUGINS")
    assert decide("a", {"HERMES_LOAD_PLUGINS": ""}) == (False, "not in HERMES_LOAD_PLUGINS")


def test_block_list_wins_over_everything():
    assert decide("a", {"HERMES_DISABLE_PLUGINS": "*", "HERMES_LOAD_PLUGINS": "a"}) == (
        False,
        "blocked by HERMES_DISABLE_PLUGINS",
    )
    assert decide("a", {"HERMES_DISABLE_PLUGINS": "b,a"}, enabled=["a"])[0] is False
    assert decide("c", {"HERMES_DISABLE_PLUGINS": "b,a"}) == (True, "installed")


def test_safe_mode_loads_only_named_plugins():
    assert decide("a", safe_mode=True) == (False, "safe mode")
    assert decide("a", {"HERMES_LOAD_PLUGINS": "a"}, safe_mode=True) == (
        True,
        "named in HERMES_LOAD_PLUGINS (safe mode)",
    )


def test_foreign_plugins_are_opt_in_and_their_names_never_make_an_allow_list():
    from dataclasses import replace

    base = PluginPolicy.from_sources(
        PluginSettings.from_mapping({"enabled": ["noisegate"], "foreign": ["loop"]}), {}, False
    )
    policy = replace(base, found_foreign=frozenset({"noisegate", "loop"}))
    assert policy.decide("chat").enabled  # a list naming only foreign plugins restricts none
    assert policy.decide("loop", foreign=True).reason == "plugins.foreign in config.yaml"
    assert policy.decide("noisegate", foreign=True).enabled
    other = policy.decide("hermes-loop", foreign=True)
    assert not other.enabled and other.opt_in
    assert other.reason == "opt-in: hermes plugins enable hermes-loop"

    mixed = replace(policy, config_enabled=frozenset({"chat", "noisegate"}))
    assert mixed.decide("chat").enabled and not mixed.decide("skills").enabled

    typo = replace(policy, config_enabled=frozenset({"chta"}))
    assert not typo.decide("chat").enabled  # a name nothing has still restricts

    blocked = replace(policy, config_disabled=frozenset({"noisegate"}))
    refused = blocked.decide("noisegate", foreign=True)
    assert not refused.enabled and not refused.opt_in  # disabled outranks being named

    empty = replace(policy, config_enabled=frozenset())
    assert not empty.decide("chat").enabled  # an explicitly empty list still loads nothing
