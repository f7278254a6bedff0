"""The repository's plugin catalog: fresh against the plugins' metadata, its bundles whole
(the catalog's reader is the plugin manager's; its own tests are in plugins/plugin-manager)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hermes_plugin_plugin_manager.catalog import load_catalog

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO / "plugin-catalog"


def test_the_catalog_bundles_and_root_pyproject_are_generated_from_the_plugins():
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_catalog.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_plugin_in_the_repository_has_an_entry_and_bundles_resolve():
    catalog = load_catalog(CATALOG)
    folders = {p.name for p in (REPO / "plugins").iterdir() if (p / "pyproject.toml").exists()}
    assert {e.package.removeprefix("hermes-plugin-") for e in catalog.entries.values()} >= folders
    assert catalog.bundle_plugins("minimal") == [
        "store-sqlite",  # the kernel holds no store engine: without one, no state
        "providers",  # the kernel picks no model itself
        "provider-openai",
        "backend-local",
        "approvals",  # nor judges commands itself: without rules, nothing runs
        "chat",
        "sessions",
        "plugin-manager",  # so that a minimal install can install more
    ]
    assert "gateway" in catalog.bundle_plugins("standard")  # both front-ends come standard
    server = catalog.bundle_plugins("server")
    assert set(catalog.bundle_plugins("standard")) < set(server)
    assert {"platform-telegram", "backend-docker", "backend-ssh", "store-postgresql"} <= set(server)
