"""Keeps tests that share one expensive or one-per-machine thing on one pytest-xdist worker.

`scripts/test` runs the suite on two workers (`--dist loadgroup`). Session fixtures are per
worker, so without this each worker would start its own dockerd (two daemons on one socket
fail) and build its own throwaway virtual environments (minutes each). The embedded model's
tests stay together and in order too: llama.cpp reuses the previous prompt's evaluated
prefix, so what ran before can change the floats a tiny model decides on (its conformance
test also fixes the sampling seed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

# The fixtures of real peers that live beside their plugins (a capability's fake or peer
# changes with it): PostgreSQL, Synapse, Dovecot with an SMTP server, and ngircd.
pytest_plugins = [
    "hermes_plugin_store_postgresql.testing",
    "hermes_plugin_platform_matrix.testing",
    "hermes_plugin_platform_email.testing",
    "hermes_plugin_platform_irc.testing",
]

# Fixture name -> the group of tests that must share a worker because of it.
_GROUP_OF_FIXTURE = {
    "docker_url": "services",
    "docker_test_image": "services",
    "docker_python_image": "services",
    "ssh_server": "services",
    "synapse": "matrix",
    "mail_server": "mail",
    "postgres": "postgres",
    # One group per venv: each is built once, and the two workers build different ones at
    # once (one group for them all ran five minutes of builds and tests on one worker).
    "plugin_venv": "venv-plugins",
    "bare_venv": "venv-bare",
    "chat_venv": "venv-chat",
    "fault_venv": "venv-faults",
    "fixture_wheels": "wheels",
    "workspace_wheels": "wheels",
}
# Test directories or files -> their group, for what a fixture name cannot tell.
_GROUP_OF_PATH = {
    Path("plugins/provider-local/tests"): "embedded-model",
    Path("tests/integration/test_getting_started.py"): "embedded-model",
    Path("testkit/tests/test_suites_catch_broken_plugins.py"): "mutants",
    Path("tests/test_platform_mutants.py"): "platform-mutants",  # mostly waiting: its own
    Path("plugins/mcp/tests/test_everything.py"): "npm",  # one npm install
    # One Chromium for the module: a worker of its own would start a second.
    Path("plugins/toolset-browser/tests/test_browser_tools.py"): "browser",
    Path("tests/browser"): "browser",
    # Its PostgreSQL half asks for the server as the test runs: one server for the file.
    Path("kernel/tests/test_store_suite.py"): "postgres",
    Path("plugins/cron/tests/test_run_log.py"): "postgres",
    Path("plugins/gateway/tests/test_claims.py"): "postgres",
    # Three front-ends started once for the module: its tests read what they showed.
    Path("tests/gateway/test_slash_everywhere.py"): "slash-everywhere",
}
_ROOT = Path(__file__).parent


def _group_of(item: pytest.Item) -> str | None:
    for name in getattr(item, "fixturenames", ()):
        group = _GROUP_OF_FIXTURE.get(name)
        if group:
            return group
    try:
        where = item.path.relative_to(_ROOT)
    except ValueError:
        return None
    for path, group in _GROUP_OF_PATH.items():
        if where == path or path in where.parents:
            return group
    return None


# First: xdist's worker reads the xdist_group marks in this same hook, and registers after
# this file loads, so without tryfirst it ran before the marks existed and no group held.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = _group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
