"""The discovery cache is reused only while the environment is unchanged."""

from __future__ import annotations

import os
import sys

import pytest

from hermes_kernel.plugins import discovery_cache
from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import Kind

RECORD = PluginRecord(
    name="p",
    target="hermes_plugin_p",
    distribution="hermes-plugin-p",
    version="1.2",
    declares=frozenset({(Kind.TOOL, "echo"), (Kind.HOOK, "hermes_pre_tool_call")}),
    has_manifest=True,
    problems=("a problem",),
    help=(("command.echo", "Echo what you say."),),
)


@pytest.fixture
def site(tmp_path, monkeypatch):
    folder = tmp_path / "site-packages"
    (folder / "hermes_plugin_p-1.2.dist-info").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(folder)])
    return folder


def store(tmp_path, metadata_dirs):
    environment = discovery_cache.fingerprint()
    watched = discovery_cache.watch_list(metadata_dirs)
    discovery_cache.store(tmp_path / "cache", environment, [RECORD], watched)


def bump(path):
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def test_round_trip(site, tmp_path):
    store(tmp_path, [str(site / "hermes_plugin_p-1.2.dist-info")])
    assert discovery_cache.load(tmp_path / "cache") == [RECORD]


def test_installing_or_removing_anything_on_sys_path_invalidates(site, tmp_path):
    store(tmp_path, [])
    (site / "other-1.0.dist-info").mkdir()
    assert discovery_cache.load(tmp_path / "cache") is None


def test_rewriting_entry_points_in_place_invalidates(site, tmp_path):
    metadata = site / "hermes_plugin_p-1.2.dist-info"
    (metadata / "entry_points.txt").write_text("[hermes.plugins]\np = hermes_plugin_p\n")
    store(tmp_path, [str(metadata)])
    assert discovery_cache.load(tmp_path / "cache") == [RECORD]
    bump(metadata / "entry_points.txt")
    assert discovery_cache.load(tmp_path / "cache") is None


def test_editing_or_adding_a_help_file_invalidates(site, tmp_path):
    help_file = site / "hermes_plugin_p" / "hermes-help.toml"
    help_file.parent.mkdir()
    environment = discovery_cache.fingerprint()
    watched = discovery_cache.watch_list([], [str(help_file)])
    discovery_cache.store(tmp_path / "cache", environment, [RECORD], watched)
    assert discovery_cache.load(tmp_path / "cache") == [RECORD]
    help_file.write_text('"command.echo" = "Echo."\n')
    assert discovery_cache.load(tmp_path / "cache") is None, "a help file added"
    discovery_cache.store(
        tmp_path / "cache", environment, [RECORD], discovery_cache.watch_list([], [str(help_file)])
    )
    assert discovery_cache.load(tmp_path / "cache") == [RECORD]
    bump(help_file)
    assert discovery_cache.load(tmp_path / "cache") is None, "a help file edited"


def test_a_change_during_the_scan_is_not_cached(site, tmp_path):
    environment = discovery_cache.fingerprint()
    (site / "installed-meanwhile-1.0.dist-info").mkdir()
    discovery_cache.store(tmp_path / "cache", environment, [RECORD], [])
    assert discovery_cache.load(tmp_path / "cache") is None


def test_another_interpreter_path_uses_another_file(site, tmp_path, monkeypatch):
    store(tmp_path, [])
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert discovery_cache.load(tmp_path / "cache") is None


def test_a_corrupt_cache_is_a_miss(site, tmp_path):
    store(tmp_path, [])
    for path in (tmp_path / "cache").iterdir():
        path.write_text('{"environment": ')
    assert discovery_cache.load(tmp_path / "cache") is None
