"""With nothing installed but the kernel and the SDK, every built-in command works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.venv


def test_every_builtin_command_works_with_zero_plugins(bare_venv, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert bare_venv.hermes("--version", home=home).out.startswith("hermes 0.1.0")
    bare = bare_venv.hermes(home=home)
    assert (
        bare.code == 0
        and "0 plugins installed" in bare.out
        and "Nothing is installed yet" in bare.out
    )
    assert "No plugins are installed" in bare_venv.hermes("plugins", "list", home=home).out
    assert (
        json.loads(bare_venv.hermes("plugins", "list", "--json", "--verify", home=home).out) == []
    )
    assert bare_venv.hermes("plugins", "disable", "x", home=home).code == 0
    assert bare_venv.hermes("config", "validate", home=home).code == 0
    assert "disabled:" in bare_venv.hermes("config", "show", home=home).out
    doctor = bare_venv.hermes("doctor", home=home)
    assert doctor.code == 0 and "0 plugins installed, 0 enabled" in doctor.out
    assert "no plugin provides a model provider" in doctor.out
    assert bare_venv.hermes("config", "path", home=home).out.strip() == str(home / "config.yaml")


def test_without_the_plugin_manager_installing_says_what_to_install(bare_venv, tmp_path: Path):
    home = tmp_path / "home"
    for args in [("plugins", "install", "chat"), ("update",), ("plugins", "catalog")]:
        run = bare_venv.hermes(*args, home=home)
        assert run.code == 1, args
        assert run.err.count("\n") == 1 and "install hermes-plugin-plugin-manager" in run.err
    assert "  install " not in bare_venv.hermes("plugins", "--help", home=home).out
    assert bare_venv.hermes("plugins", "info", "x", home=home).code == 1  # not installed
    assert bare_venv.hermes("plugins", "enable", "x", home=home).code == 1  # the same
