"""Turning entry points into plugin records (the scan itself runs against a real venv in
tests/integration)."""

from __future__ import annotations

import importlib
import sys

import pytest

from hermes_kernel.plugins import MANIFEST_GROUP, PLUGIN_GROUP
from hermes_kernel.plugins.discovery import (
    _Entry,
    _with_help,
    declared_conflicts,
    records_from_entries,
)
from hermes_sdk import Kind


def plugin(name: str, value: str, dist: str) -> _Entry:
    return _Entry(PLUGIN_GROUP, name, value, dist, "1.0", None)


def provides(key: str, value: str, dist: str) -> _Entry:
    return _Entry(MANIFEST_GROUP, key, value, dist, "1.0", None)


def test_manifest_entries_attach_to_their_plugin_by_target():
    records = records_from_entries(
        [
            plugin("a", "pkg.a", "multi"),
            plugin("b", "pkg.b", "multi"),
            provides("tool.x", "pkg.b", "multi"),
            provides("tool.y", "pkg.a", "multi"),
        ]
    )
    by_name = {r.name: r for r in records}
    assert by_name["a"].declares == {(Kind.TOOL, "y")}
    assert by_name["b"].declares == {(Kind.TOOL, "x")}
    assert by_name["a"].has_manifest and by_name["b"].has_manifest


def test_a_single_plugin_distribution_owns_its_manifest_whatever_the_value():
    [record] = records_from_entries(
        [plugin("a", "pkg", "d"), provides("command.go", "pkg:other", "d")]
    )
    assert record.declares == {(Kind.COMMAND, "go")}


def test_bad_manifest_keys_are_problems_that_say_what_is_valid():
    [record] = records_from_entries([plugin("a", "pkg", "d"), provides("tools.echo", "pkg", "d")])
    assert record.problems == (
        "bad hermes.provides entry: manifest key 'tools.echo' has unknown kind 'tools'; use one of: "
        "provider, backend, platform, memory, tool, toolset, skill_source, command, slash, config, rung, "
        "service, context_engine, tool_source, prices, review, importer, delivery, transcriber, model_router, store_engine, command_rules, pending, panel, plugin_source, default_command, hook",
    )


def test_a_plugin_name_used_by_two_distributions_marks_the_second():
    records = records_from_entries([plugin("x", "one", "dist-b"), plugin("x", "two", "dist-a")])
    assert [(r.distribution, r.problems) for r in records] == [
        ("dist-a", ()),
        (
            "dist-b",
            ("plugin name 'x' is already used by distribution dist-a; uninstall one of the two",),
        ),
    ]


def test_declared_conflicts_name_the_earlier_plugin():
    records = records_from_entries(
        [
            plugin("a", "a", "da"),
            provides("tool.t", "a", "da"),
            plugin("b", "b", "db"),
            provides("tool.t", "b", "db"),
        ]
    )
    assert declared_conflicts(records) == {"b": ["declares tool 't', also declared by plugin 'a'"]}


@pytest.fixture
def packages(tmp_path, monkeypatch):
    """A folder on sys.path to put plugin packages in."""
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()

    def package(name: str, help_text: str | None) -> None:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise RuntimeError('imported')\n")
        if help_text is not None:
            (tmp_path / name / "hermes-help.toml").write_text(help_text, encoding="utf-8")

    return package


def test_a_commands_help_is_read_from_its_help_file_without_importing_it(packages):
    packages("hermes_plugin_helped", '"command.go" = "Go somewhere."\n')
    entries = [plugin("h", "hermes_plugin_helped", "d"), provides("command.go", "x", "d")]
    [record] = records_from_entries(_with_help(entries))
    assert record.help_for(Kind.COMMAND, "go") == "Go somewhere."
    assert record.help_for(Kind.COMMAND, "other") == ""
    assert "hermes_plugin_helped" not in sys.modules


def test_help_is_looked_for_only_where_a_command_is_declared_and_a_bad_file_is_ignored(packages):
    packages("hermes_plugin_toolish", '"tool.t" = "A tool."\n')
    packages("hermes_plugin_broken_help", '"command.go" = [1]\n')
    entries = [
        plugin("t", "hermes_plugin_toolish", "dt"),
        provides("tool.t", "x", "dt"),
        plugin("b", "hermes_plugin_broken_help:attr", "db"),
        provides("command.go", "x", "db"),
    ]
    scanned = {entry.name: entry for entry in _with_help(entries)}
    assert scanned["t"].help_file is None, "no command declared: no help file looked up"
    assert scanned["b"].help_file is not None and scanned["b"].help == ()
