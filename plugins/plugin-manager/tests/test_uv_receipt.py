"""The uv tool receipt writer: what uv wrote reads back the same after Hermes rewrites it."""

from __future__ import annotations

import tomllib

import pytest
from hermes_plugin_plugin_manager.environment import Installed, InstallerError
from hermes_plugin_plugin_manager.uv_receipt import dumps, record, requirement_of

# Written by uv 0.13 for `uv tool install "hermes-kernel[dev]>=0.1; python_version>='3'"
# --with ...` (one of each requirement shape), with an option table.
UV_WROTE = """[tool]
requirements = [
    { name = "hermes-kernel", extras = ["dev"], marker = "python_full_version >= '3'", specifier = ">=0.1" },
    { name = "hermes-plugin-good", git = "file:///tmp/repo?subdirectory=sub&rev=899d93ed" },
    { name = "hermes-plugin-toolset-files", specifier = "==0.1.0" },
    { name = "hermes-plugin-memory-builtin", path = "/tmp/ww/hermes_plugin_memory_builtin-0.1.0-py3-none-any.whl" },
    { name = "hermes-plugin-skills", directory = "/work/plugins/skills" },
    { name = "hermes-plugin-legacy", editable = "/work/fixtures/legacy" },
]
entrypoints = [
    { name = "hermes", install-path = "/tmp/bin/hermes", from = "hermes-kernel" },
]

[tool.options]
find-links = ["file:///tmp/ww"]
"""


def test_a_receipt_reads_back_the_same_after_rewriting():
    assert tomllib.loads(dumps(tomllib.loads(UV_WROTE))) == tomllib.loads(UV_WROTE)
    assert dumps(tomllib.loads(UV_WROTE)) == UV_WROTE, "in uv's own layout"


def test_each_install_source_becomes_the_entry_uv_would_write():
    def entry(direct_url):
        return requirement_of(Installed("hermes-plugin-x", "1.2", direct_url))

    assert entry(None) == {"name": "hermes-plugin-x", "specifier": "==1.2"}
    git = {
        "url": "https://example.org/x.git",
        "subdirectory": "sub",
        "vcs_info": {"vcs": "git", "commit_id": "abc123", "requested_revision": "main"},
    }
    assert entry(git)["git"] == "https://example.org/x.git?subdirectory=sub&rev=main"
    assert entry({"url": "file:///a%20b/x", "dir_info": {"editable": True}}) == {
        "name": "hermes-plugin-x",
        "editable": "/a b/x",
    }
    assert entry({"url": "file:///w/x.whl", "archive_info": {}})["path"] == "/w/x.whl"
    assert entry({"url": "https://h/x.whl", "archive_info": {}})["url"] == "https://h/x.whl"


def test_plugins_are_added_replaced_and_removed_but_the_tools_package_never(tmp_path):
    (tmp_path / "uv-receipt.toml").write_text(UV_WROTE)
    new = Installed("hermes-plugin-new", "2.0", None)
    good = Installed("hermes_plugin_good", "0.2", None)  # listed: rewritten in place
    dependency = Installed("hermes-plugin-openai", "1.0", None)  # came with the tool
    kernel = Installed("hermes-kernel", "9.9", None)
    unlisted = record(
        tmp_path,
        changed=[new, good, dependency, kernel],
        added={"hermes-plugin-new"},
        removed=["hermes-plugin-skills", "hermes-plugin-openai"],
    )
    assert unlisted == ["hermes-plugin-openai"]
    receipt = tomllib.loads((tmp_path / "uv-receipt.toml").read_text())
    requirements = {r["name"]: r for r in receipt["tool"]["requirements"]}
    assert receipt["tool"]["requirements"][0]["specifier"] == ">=0.1", "the tool is untouched"
    assert requirements["hermes-plugin-new"] == {"name": "hermes-plugin-new", "specifier": "==2.0"}
    assert requirements["hermes_plugin_good"]["specifier"] == "==0.2"
    assert "hermes-plugin-good" not in requirements and "hermes-plugin-skills" not in requirements
    assert "hermes-plugin-openai" not in requirements
    assert receipt["tool"]["options"] == {"find-links": ["file:///tmp/ww"]}


def test_a_damaged_receipt_is_a_one_line_installer_error(tmp_path):
    (tmp_path / "uv-receipt.toml").write_text("[tool\nrequirements = ")
    with pytest.raises(InstallerError, match="cannot read the uv tool receipt") as raised:
        record(tmp_path, changed=[], added=set(), removed=["x"])
    assert "\n" not in str(raised.value)
