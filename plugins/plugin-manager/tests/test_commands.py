"""The plugin manager's commands as a user runs them, in the environment these tests run in:
they join ``hermes plugins`` and the top level, read a catalog, say what is outdated, and,
with the plugin disabled, are one line naming it while ``hermes plugins list`` keeps working.
(Installing for real, in throwaway venvs: tests/integration/test_plugin_install.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import hermes_plugin_plugin_manager
import pytest
import yaml

from hermes_testkit import PluginTests

HERMES = str(Path(sys.executable).parent / "hermes")
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


class TestPlugin(PluginTests):
    plugin = hermes_plugin_plugin_manager
    pyproject = PYPROJECT


def hermes(
    home: Path, *args: str, load: str | None = "plugin-manager"
) -> subprocess.CompletedProcess[str]:
    """Run ``hermes ARGS`` on ``home``; ``load`` is HERMES_LOAD_PLUGINS (None: unset)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    environ["HERMES_HOME"] = str(home)
    if load is not None:
        environ["HERMES_LOAD_PLUGINS"] = load
    return subprocess.run(
        [HERMES, *args], env=environ, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A catalog with one entry: the plugin manager itself, at a newer release."""
    folder = tmp_path / "catalog"
    (folder / "entries").mkdir(parents=True)
    provides = sorted(
        tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]["hermes.provides"]
    )
    entry = {
        "name": "plugin-manager",
        "package": "hermes-plugin-plugin-manager",
        "source": {"pypi": "hermes-plugin-plugin-manager", "version": "9.0.0", "sha256": "0" * 64},
        "kinds": sorted({key.split(".")[0] for key in provides}),
        "provides": provides,
        "description": "Installs plugins.",
        "homepage": "https://example.org/pm",
        "maintainer": "Ada <ada@example.org>",
        "tier": "official",
        "requires_hermes": ">=0.1,<0.2",
        "requires_sdk": ">=0.1,<0.2",
    }
    (folder / "entries" / "plugin-manager.yaml").write_text(yaml.safe_dump(entry))
    return folder


def test_its_commands_join_the_plugins_group_and_the_top_level(tmp_path):
    listed = hermes(tmp_path, "plugins", "--help")
    assert listed.returncode == 0, listed.stderr
    for name in ("install", "uninstall", "upgrade", "catalog", "validate", "outdated"):
        assert f"  {name} " in listed.stdout
    assert "(plugin plugin-manager)" in listed.stdout
    for name in ("list", "info", "enable", "disable"):  # the kernel's own, beside them
        assert f"  {name} " in listed.stdout
    top = hermes(tmp_path, "--help").stdout
    assert "  update " in top and "  install " not in top


def test_catalog_search_validate_outdated_and_update_check_read_the_catalog(tmp_path, catalog):
    home = tmp_path / "home"
    listing = hermes(home, "plugins", "catalog", "--catalog", str(catalog))
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.startswith("plugin-manager  9.0.0    official  Installs plugins.")
    found = hermes(home, "plugins", "catalog", "--catalog", str(catalog), "search", "installs")
    assert "plugin-manager" in found.stdout
    assert hermes(
        home, "plugins", "catalog", "--catalog", str(catalog), "search", "zzz"
    ).stdout == ("no catalog entry matches\n")
    entry = catalog / "entries" / "plugin-manager.yaml"
    checked = hermes(home, "plugins", "validate", "--schema-only", str(entry))
    assert checked.stdout == "plugin-manager: ok (schema)\n", checked.stderr
    outdated = hermes(home, "plugins", "outdated", "--catalog", str(catalog))
    assert "plugin-manager: 0.1.0 installed, catalog has 9.0.0" in outdated.stdout, outdated.stderr
    # Installed here from its folder (the workspace's way): `hermes update` moves catalogued
    # releases only, so it is left as it is (an index release moves: test_plugin_install.py).
    check = hermes(home, "update", "--check", "--catalog", str(catalog))
    assert check.returncode == 0, check.stderr
    assert check.stdout == "everything is up to date\n"


def test_mistakes_are_one_line_and_change_nothing(tmp_path):
    home = tmp_path / "home"
    gone = hermes(home, "plugins", "uninstall", "nope", "--yes")
    assert gone.returncode == 1
    assert gone.stderr == "Error: no installed plugin named 'nope'; see: hermes plugins list\n"
    nothing = hermes(home, "plugins", "install")
    assert nothing.returncode == 2 and "name a plugin" in nothing.stderr
    missing = hermes(home, "plugins", "install", "./no/such/folder", "--yes")
    assert missing.returncode == 1
    assert missing.stderr == "Error: ./no/such/folder: no such folder, wheel or catalog entry\n"
    assert not (home / "config.yaml").exists()


def test_disabled_it_is_named_and_the_kernels_commands_still_work(tmp_path):
    home = tmp_path / "home"
    assert hermes(home, "plugins", "disable", "plugin-manager", load=None).returncode == 0
    for args in [("plugins", "install", "x"), ("update",)]:
        run = hermes(home, *args, load=None)
        assert run.returncode == 1
        assert run.stderr == (
            f"Error: `hermes {' '.join(args[:2])}` comes from plugin 'plugin-manager' "
            "(hermes-plugin-plugin-manager), which is disabled (plugins.disabled in "
            "config.yaml); enable it: hermes plugins enable plugin-manager\n"
        )
    listed = hermes(home, "plugins", "list", load=None)
    [row] = [line for line in listed.stdout.splitlines() if line.startswith("plugin-manager ")]
    assert listed.returncode == 0 and "disabled (plugins.disabled in config.yaml)" in row
    info = hermes(home, "plugins", "info", "plugin-manager", load=None)
    assert info.returncode == 0 and "command.plugins.install" in info.stdout
    assert hermes(home, "plugins", "enable", "plugin-manager", load=None).returncode == 0
    assert hermes(home, "plugins", "catalog", "--help", load=None).returncode == 0
