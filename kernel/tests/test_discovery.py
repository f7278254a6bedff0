"""Turning entry points into plugin records (the scan itself runs against a real venv in
tests/integration)."""

from __future__ import annotations

from hermes_kernel.plugins import MANIFEST_GROUP, PLUGIN_GROUP
from hermes_kernel.plugins.discovery import _Entry, declared_conflicts, records_from_entries
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
        "service, context_engine, tool_source, prices, review, hook",
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
