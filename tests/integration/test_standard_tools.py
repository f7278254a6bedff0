"""Every tool the standard bundle ships keeps the call contract that ``ToolsTests`` checks for
third-party plugins: a valid JSON schema that agrees with its handler's signature.

(The bundle's toolsets leave some arguments undescribed to keep every request small, so they
do not run the whole suite; this is the part the engine depends on.)"""

from __future__ import annotations

import pytest

from hermes_kernel.app import App
from hermes_kernel.config.settings import Flags
from hermes_sdk.tool_calls import schema_problem, signature_problems


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    for name in ("HERMES_LOAD_PLUGINS", "HERMES_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    return App(Flags())


def test_every_standard_tool_has_a_valid_schema_that_fits_its_handler(app):
    tools = {spec.name: spec for spec in app.host.tools()}
    expected = {"terminal", "process", "read_file", "write_file", "patch", "search_files"}
    assert expected <= set(tools), sorted(tools)
    problems = [
        problem
        for spec in tools.values()
        for problem in [schema_problem(spec), *signature_problems(spec)]
        if problem
    ]
    assert problems == []
