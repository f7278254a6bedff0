"""The file tools against a real local backend."""

from pathlib import Path

import pytest
from hermes_plugin_backend_local.backend import LocalBackend
from hermes_plugin_toolset_files import tools

from hermes_sdk.tooling import ToolContext
from hermes_testkit import tool_context


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    return tool_context(LocalBackend(str(tmp_path), {"PATH": "/usr/bin:/bin"}))


def test_write_read_with_line_numbers_and_paging(context: ToolContext, tmp_path: Path) -> None:
    body = "".join(f"line {n}\n" for n in range(1, 8))
    assert tools.write_file("sub/notes.txt", body, context) == "wrote 49 bytes to sub/notes.txt"
    assert (tmp_path / "sub/notes.txt").read_text() == body
    page = tools.read_file("sub/notes.txt", context, offset=3, limit=2)
    assert page.splitlines() == [
        "3\tline 3",
        "4\tline 4",
        "[lines 3-4 of 7; read on with offset=5]",
    ]


def test_binary_files_are_not_shown(context: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ValueError, match="binary file"):
        tools.read_file("blob", context)


def test_patch_by_replacement_and_by_diff(context: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\nb = 2\n")
    assert "exact" in tools.patch("m.py", context, old_string="a = 1", new_string="a = 10")
    assert tools.patch("m.py", context, diff="@@ -2 +2 @@\n-b = 2\n+b = 20\n").startswith("patched")
    assert (tmp_path / "m.py").read_text() == "a = 10\nb = 20\n"


def test_search_contents_and_files(context: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("import os\nTODO = 'fix me'\n")
    (tmp_path / "README.md").write_text("todo: nothing\n")
    found = tools.search_files("TODO", context)
    assert "src/app.py:2:TODO = 'fix me'" in found and "README" not in found
    assert "README.md" in tools.search_files("todo", context, ignore_case=True)
    assert tools.search_files("TODO", context, file_glob="*.md") == "no matches"
    assert "src/app.py" in tools.search_files("*.py", context, target="files")
