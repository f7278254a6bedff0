"""The help file: found without importing the plugin, read strictly, and checked against
what the plugin registers (by the kernel at load time and by PluginTests)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from hermes_commons.help_file import HELP_FILE, help_file_of, help_problems, parse_help
from hermes_sdk import CommandSpec, Kind, ToolSpec
from hermes_testkit import PluginTests
from hermes_testkit.registered import RegisteredPlugin

GO = CommandSpec(name="go", description="Go somewhere.", factory=lambda: None)


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package on sys.path that raises if imported; returns its folder."""
    monkeypatch.syspath_prepend(str(tmp_path))
    folder = tmp_path / "hermes_plugin_helpfile_probe"
    folder.mkdir()
    (folder / "__init__.py").write_text("raise RuntimeError('imported')\n")
    importlib.invalidate_caches()
    return folder


def test_the_file_is_found_in_the_top_level_package_without_importing_it(package):
    for target in ["hermes_plugin_helpfile_probe", "hermes_plugin_helpfile_probe.sub:plugin"]:
        assert help_file_of(target) == package / HELP_FILE
    assert "hermes_plugin_helpfile_probe" not in sys.modules
    assert help_file_of("no_such_module_anywhere") is None


def test_a_single_module_plugin_has_no_help_file(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "hermes_plugin_lonely.py").write_text("")
    importlib.invalidate_caches()
    assert help_file_of("hermes_plugin_lonely") is None


def test_parsing_keeps_one_line_per_manifest_key():
    text = '# comment\n"command.go" = "Go somewhere."\n"tool.t" = " A tool. "\n'
    assert parse_help(text) == {(Kind.COMMAND, "go"): "Go somewhere.", (Kind.TOOL, "t"): "A tool."}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('"command.go" = ', "hermes-help.toml is not valid TOML"),
        ('"command.go" = 3', "hermes-help.toml: 'command.go' must be one line of text"),
        ('"command.go" = "two\\nlines"', "must be one line of text"),
        ('"command.go" = ""', "must be one line of text"),
        ('"commands.go" = "Go."', "hermes-help.toml: manifest key 'commands.go' has unknown kind"),
    ],
)
def test_a_bad_file_is_one_clear_error(text, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(")):
        parse_help(text)


def test_problems_name_each_missing_wrong_and_stale_line():
    tool = ToolSpec(name="t", description="A tool.", handler=len)
    assert help_problems({(Kind.COMMAND, "go"): "Go somewhere."}, [GO, tool]) == []
    assert help_problems({}, [GO]) == [
        "hermes-help.toml does not describe command 'go' as its spec does; "
        "write: 'command.go' = 'Go somewhere.'"
    ]
    assert help_problems({(Kind.COMMAND, "go"): "Go.", (Kind.TOOL, "t"): "Old."}, [GO, tool]) == [
        "hermes-help.toml does not describe command 'go' as its spec does; "
        "write: 'command.go' = 'Go somewhere.'",
        "hermes-help.toml does not describe tool 't' as its spec does; write: 'tool.t' = 'A tool.'",
    ]
    assert help_problems({(Kind.COMMAND, "gone"): "Gone."}, []) == [
        "hermes-help.toml describes command 'gone', which the plugin does not register"
    ]
    silent = CommandSpec(name="hush", factory=lambda: None)
    assert help_problems({}, [silent]) == [
        "command 'hush' has no description; give its CommandSpec one"
    ]


def test_plugin_tests_fail_a_plugin_whose_help_file_is_stale(package: Path, request):
    (package / "__init__.py").write_text("")
    module = importlib.import_module("hermes_plugin_helpfile_probe")
    request.addfinalizer(lambda: sys.modules.pop("hermes_plugin_helpfile_probe", None))

    class Suite(PluginTests):
        plugin = module

    registered = RegisteredPlugin("probe", module, (GO,))
    with pytest.raises(AssertionError, match="does not describe command 'go'"):
        Suite().test_the_help_file_describes_every_command(registered)
    (package / HELP_FILE).write_text('"command.go" = "Go somewhere."\n')
    Suite().test_the_help_file_describes_every_command(registered)
