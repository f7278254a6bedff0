"""Hermes toolset ``files``: read_file, write_file, patch and search_files."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_plugin_toolset_files import tools
from hermes_sdk import ToolsetSpec, ToolSpec, hookimpl

_PATH = {"type": "string", "description": "File path; relative paths start at the working dir."}


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="files", description="read, write, patch and search files")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="read_file",
        toolset="files",
        takes_context=True,
        parallel_safe=True,
        description="Read a text file with line numbers, 500 lines at a time.",
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "offset": {"type": "integer", "minimum": 1, "description": "First line (1)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Lines (500)."},
            },
            "required": ["path"],
        },
        handler=tools.read_file,
    )
    yield ToolSpec(
        name="write_file",
        toolset="files",
        takes_context=True,
        description="Create or replace a whole file (folders are created). Prefer patch "
        "for changing part of a file.",
        parameters={
            "type": "object",
            "properties": {"path": _PATH, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
        handler=tools.write_file,
    )
    yield ToolSpec(
        name="patch",
        toolset="files",
        takes_context=True,
        description="Change part of a file: replace old_string (which must be unique; "
        "indentation differences are tolerated) with new_string, or apply a unified diff.",
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "old_string": {"type": "string", "description": "Exact text to replace."},
                "new_string": {"type": "string", "description": "Its replacement."},
                "replace_all": {"type": "boolean", "description": "Replace every match."},
                "diff": {"type": "string", "description": "A unified diff (@@ hunks)."},
            },
            "required": ["path"],
        },
        handler=tools.patch,
    )
    yield ToolSpec(
        name="search_files",
        toolset="files",
        takes_context=True,
        parallel_safe=True,
        description="Search file contents by regex (target=content) or find files by glob "
        "(target=files). Uses ripgrep when installed; skips .git.",
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regex, or a glob for files."},
                "path": {"type": "string", "description": "Where to search (.)."},
                "target": {"type": "string", "enum": ["content", "files"]},
                "file_glob": {"type": "string", "description": "Only files matching (*.py)."},
                "context_lines": {"type": "integer", "minimum": 0, "maximum": 20},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 1000},
                "ignore_case": {"type": "boolean"},
            },
            "required": ["pattern"],
        },
        handler=tools.search_files,
    )
