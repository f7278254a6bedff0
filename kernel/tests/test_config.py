"""config.yaml and .env: precedence, and one precise line per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.settings import Flags, load_settings


def settings_for(home: Path, config: str | None = None, dotenv: str | None = None, **environ):
    home.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (home / "config.yaml").write_text(config)
    if dotenv is not None:
        (home / ".env").write_text(dotenv)
    return load_settings(Flags(home=home), environ)


def problems_for(home: Path, config: str | None = None, dotenv: str | None = None) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        settings_for(home, config, dotenv)
    return raised.value.problems


def test_defaults_without_any_file(tmp_path):
    settings = settings_for(tmp_path / "home")
    assert settings.plugins.load_timeout_seconds == 10
    assert settings.plugins.enabled is None
    assert settings.warnings == []


def test_home_precedence_flag_then_environment_then_default(tmp_path, monkeypatch):
    from hermes_kernel.config.home import base_home

    monkeypatch.setenv("HOME", str(tmp_path))
    assert base_home(None, {}) == tmp_path / ".hermes"
    assert base_home(None, {"HERMES_HOME": "~/x"}) == tmp_path / "x"
    assert base_home(tmp_path / "flag", {"HERMES_HOME": "/nope"}) == tmp_path / "flag"


def test_profiles_select_a_sub_home_and_a_missing_one_is_an_error(tmp_path):
    (tmp_path / "profiles" / "work").mkdir(parents=True)
    (tmp_path / "profiles" / "work" / "config.yaml").write_text("plugins:\n  disabled: [x]\n")
    settings = load_settings(Flags(home=tmp_path, profile="work"), {})
    assert settings.home == tmp_path / "profiles" / "work"
    assert settings.plugins.disabled == ("x",)
    with pytest.raises(
        ConfigError,
        match=r"'wrok'.*\(existing profiles: work\); create it with: hermes profile create wrok",
    ):
        load_settings(Flags(home=tmp_path, profile="wrok"), {})


def test_yaml_syntax_error_names_file_line_and_column(tmp_path):
    [problem] = problems_for(tmp_path, "plugins:\n  disabled: [a\n  strict: true\n")
    assert problem.startswith(f"{tmp_path / 'config.yaml'}:3:")
    assert "YAML syntax error" in problem


def test_validation_error_names_file_line_key_and_expectation(tmp_path):
    config = (
        "# my config\nplugins:\n  strict: false\n  load_timeout_seconds: ten\n  disabled: nope\n"
    )
    problems = problems_for(tmp_path, config)
    path = tmp_path / "config.yaml"
    assert problems == [
        f"{path}:4: plugins.load_timeout_seconds: expected a valid number, unable to parse "
        "string as a number (got 'ten')",
        f"{path}:5: plugins.disabled: expected a valid list (got 'nope')",
    ]


def test_top_level_must_be_a_mapping(tmp_path):
    assert problems_for(tmp_path, "- a\n- b\n") == [
        f"{tmp_path / 'config.yaml'}:1: the top level must be a mapping of keys (like 'plugins:'), got a list"
    ]


def test_unknown_keys_warn_and_the_rest_still_loads(tmp_path):
    settings = settings_for(tmp_path, "model: gpt\nplugins:\n  disabeld: [x]\n  strict: true\n")
    assert settings.plugins.strict is True
    path = tmp_path / "config.yaml"
    assert settings.warnings == [  # one line names every unknown key, with the likely one
        f"{path}: 1 unknown key ignored: plugins.disabeld (line 3; did you mean 'disabled'?); "
        "see: hermes doctor"
    ]
    assert settings.unknown_keys == [
        (
            f"{path}:3: unknown key 'plugins.disabeld' is ignored",
            "rename it to 'disabled' if that is what you meant, or remove it",
        )
    ]


def test_a_plugins_own_settings_under_plugins_are_not_unknown(tmp_path):
    text = "plugins:\n  noisegate:\n    mode: strict\n  entries:\n    x: {a: 1}\n  isolatd: [x]\n"
    settings = settings_for(tmp_path, text)
    assert [line for line, _fix in settings.unknown_keys] == [
        f"{tmp_path / 'config.yaml'}:6: unknown key 'plugins.isolatd' is ignored"
    ]


def test_unknown_keys_in_any_section_are_ignored_not_refused_and_named_once(tmp_path):
    text = (
        "terminal:\n  backend: local\n  share_backnd: true\napprovals:\n  mdoe: off\n"
        "  deny: ['rm *']\nproviders:\n  mine:\n    base_url: http://127.0.0.1:9/v1\n"
        "    api_kye_env: X\n"
    )
    settings = settings_for(tmp_path, text)
    (line,) = settings.warnings
    assert "4 unknown keys ignored" in line
    for named in (
        "terminal.backend (line 2)",
        "terminal.share_backnd (line 3; did you mean 'share_backend'?)",
        "approvals.mdoe (line 5; did you mean 'mode'?)",
        "providers.mine.api_kye_env (line 10; did you mean 'api_key_env'?)",
    ):
        assert named in line
    assert len(settings.unknown_keys) == 4
    assert settings.raw["approvals"] == {"deny": ["rm *"]}  # what readers see: known keys only
    assert "backend" not in settings.raw["terminal"]


def test_an_empty_plugins_section_is_accepted(tmp_path):
    assert settings_for(tmp_path, "plugins:\n").plugins.disabled == ()


def test_dotenv_values_are_secrets_and_the_environment_wins(tmp_path):
    settings = settings_for(
        tmp_path,
        dotenv="# keys\nexport OPENAI_API_KEY=\"sk-from-file\"\nBOT=abc # comment\nQ='a b'\n",
        OPENAI_API_KEY="sk-from-env",
    )
    assert settings.secrets.get("OPENAI_API_KEY") == "sk-from-env"
    assert settings.secrets.get("BOT") == "abc"
    assert settings.secrets.get("Q") == "a b"
    import os

    assert "BOT" not in os.environ, ".env values never enter the process environment"


def test_every_problem_is_reported_at_once(tmp_path):
    problems = problems_for(tmp_path, "plugins:\n  strict: maybe\n", "bad line\n")
    assert len(problems) == 2
    assert "plugins.strict" in problems[0] and ".env:1" in problems[1]


def test_plugin_settings_defaults_match_the_pydantic_model():
    from hermes_kernel.config.controls import PluginSettings
    from hermes_kernel.config.model import PluginsConfig

    assert PluginSettings.from_mapping(PluginsConfig().model_dump()) == PluginSettings()
    assert set(PluginsConfig.model_fields) == set(PluginSettings().as_mapping())


def test_unchanged_config_is_served_from_cache_without_yaml_or_pydantic(tmp_path):
    import subprocess
    import sys

    (tmp_path / "config.yaml").write_text("plugins:\n  disabled: [a]\n  typo_key: 1\n")
    probe = (
        "import sys\nfrom pathlib import Path\n"
        "from hermes_kernel.config.settings import Flags, load_settings\n"
        f"s = load_settings(Flags(home=Path({str(tmp_path)!r})), {{}})\n"
        "print(s.plugins.disabled, len(s.warnings), s.document.where(('plugins', 'disabled')),"
        " 'yaml' in sys.modules, 'pydantic' in sys.modules)\n"
    )

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout

    first, second = run(), run()
    where = f"{tmp_path / 'config.yaml'}:2"
    assert first.split() == ["('a',)", "1", where, "True", "True"]
    assert second.split() == ["('a',)", "1", where, "False", "False"], "cache hit skips both"
    (tmp_path / "config.yaml").write_text("plugins:\n  disabled: [b]\n  typo_key: 1\n")  # same size
    assert run().split()[:1] == ["('b',)"], "a content change is a miss"


def test_a_broken_config_is_never_cached(tmp_path):
    (tmp_path / "config.yaml").write_text("plugins:\n  strict: maybe\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"plugins\.strict"):
            load_settings(Flags(home=tmp_path), {})
    assert not (tmp_path / "cache" / "config.json").exists()


def test_repeated_keys_are_errors_not_silently_dropped(tmp_path):
    config = "plugins:\n  disabled: [a]\nother: 1\nplugins:\n  strict: true\n"
    assert problems_for(tmp_path, config) == [
        f"{tmp_path / 'config.yaml'}:4: key 'plugins' repeats line 1; merge the two"
    ]


def test_values_json_cannot_hold_still_load_and_are_not_cached(tmp_path):
    config = "since: 2024-01-01\nthings:\n  1: one\nplugins:\n  disabled: [a]\n"
    for _ in range(2):  # a miss, then (since nothing could be cached) a miss again
        settings = settings_for(tmp_path, config)
        assert settings.raw["things"][1] == "one" and str(settings.raw["since"]) == "2024-01-01"
    assert not (tmp_path / "cache" / "config.json").exists()
    cache = tmp_path / "cache"
    assert not cache.exists() or list(cache.iterdir()) == [], "no temp files left behind"


def test_a_damaged_config_cache_is_a_miss(tmp_path):
    settings_for(tmp_path, "plugins:\n  disabled: [a]\n")
    cache = tmp_path / "cache" / "config.json"
    import json

    entry = json.loads(cache.read_text())
    for damaged in [{**entry, "document": None}, {"key": entry["key"]}, {**entry, "plugins": []}]:
        cache.write_text(json.dumps(damaged))
        assert settings_for(tmp_path).plugins.disabled == ("a",)


def test_every_kernel_section_is_a_field_of_the_kernel_config():
    from hermes_kernel.config.controls import KERNEL_SECTIONS
    from hermes_kernel.config.model import KernelConfig

    assert set(KernelConfig.model_fields) == set(KERNEL_SECTIONS)
    empty = KernelConfig.model_validate(dict.fromkeys(KERNEL_SECTIONS))  # "compression:" alone
    assert empty.compression.unattended_threshold == 0.85
    assert not {"gateway", "platforms"} & KERNEL_SECTIONS  # the gateway plugin's sections


def test_the_old_name_of_the_unattended_threshold_is_still_read(tmp_path) -> None:
    """Issue 61: compression.gateway_threshold became unattended_threshold (no front-end is
    named in the kernel); a config written with the old name keeps its value."""
    from hermes_kernel.config.model import KernelConfig
    from hermes_kernel.engine.compaction import CompressionSettings

    raw = {"compression": {"gateway_threshold": 0.6}}
    assert KernelConfig.model_validate(raw).compression.unattended_threshold == 0.6
    assert CompressionSettings.from_config(raw).unattended_threshold == 0.6
    new = {"compression": {"unattended_threshold": 0.7}}
    assert CompressionSettings.from_config(new).unattended_threshold == 0.7
