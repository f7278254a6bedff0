"""The file tool handlers. Every one goes through the session's backend, so they work the
same on this machine, in a container and over SSH, and writes pass the kernel's write
protection."""

from __future__ import annotations

import shlex

from hermes_plugin_toolset_files.patching import apply_unified_diff, replace_text
from hermes_sdk.tooling import ToolContext

DEFAULT_LINES = 500
MAX_LINE_CHARS = 2_000
SEARCH_OUTPUT_CHARS = 40_000


def _decode(data: bytes, path: str) -> str:
    if b"\0" in data[:8192]:
        raise ValueError(f"{path} is a binary file ({len(data):,} bytes); it is not shown")
    return data.decode("utf-8", errors="replace")


def read_file(path: str, context: ToolContext, offset: int = 1, limit: int = DEFAULT_LINES) -> str:
    backend = context.backend()
    text = _decode(backend.read_file(path), path)
    lines = text.splitlines()
    first = max(offset, 1)
    chosen = lines[first - 1 : first - 1 + max(limit, 1)]
    if not lines:
        return f"{path} is empty"
    if not chosen:
        return f"{path} has {len(lines)} lines; offset {offset} is past the end"
    width = len(str(first + len(chosen) - 1))
    numbered = [
        f"{n:>{width}}\t{line[:MAX_LINE_CHARS]}{' […]' if len(line) > MAX_LINE_CHARS else ''}"
        for n, line in enumerate(chosen, first)
    ]
    last = first + len(chosen) - 1
    if last < len(lines):
        numbered.append(f"[lines {first}-{last} of {len(lines)}; read on with offset={last + 1}]")
    return "\n".join(numbered)


def write_file(path: str, content: str, context: ToolContext) -> str:
    data = content.encode("utf-8")
    context.backend().write_file(path, data)
    return f"wrote {len(data):,} bytes to {path}"


def patch(
    path: str,
    context: ToolContext,
    old_string: str | None = None,
    new_string: str | None = None,
    replace_all: bool = False,
    diff: str | None = None,
) -> str:
    backend = context.backend()
    text = _decode(backend.read_file(path), path)
    if diff is not None:
        updated, how = apply_unified_diff(text, diff)
    elif old_string is not None and new_string is not None:
        updated, how = replace_text(text, old_string, new_string, replace_all)
    else:
        raise ValueError("give old_string and new_string, or a unified diff")
    if updated == text:
        return f"{path} is unchanged (the new text equals the old)"
    backend.write_file(path, updated.encode("utf-8"))
    return f"patched {path}: {how}"


def search_files(
    pattern: str,
    context: ToolContext,
    path: str = ".",
    target: str = "content",
    file_glob: str | None = None,
    context_lines: int = 0,
    max_results: int = 50,
    ignore_case: bool = False,
) -> str:
    backend = context.backend()
    limit = max(1, min(max_results, 1000))
    where = shlex.quote(path)
    if target == "files":
        glob = shlex.quote(pattern)
        command = (
            f"if command -v rg >/dev/null 2>&1; then rg --files --hidden -g '!.git' -g {glob} "
            f"{where}; else find {where} -name .git -prune -o -name {glob} -print; fi"
        )
    elif target == "content":
        options = ["-n"] + (["-i"] if ignore_case else [])
        if context_lines > 0:
            options.append(f"-C{min(context_lines, 20)}")
        flags = " ".join(options)
        needle = shlex.quote(pattern)
        rg_glob = f" -g {shlex.quote(file_glob)}" if file_glob else ""
        name = f" -name {shlex.quote(file_glob)}" if file_glob else ""
        # ripgrep when installed; else find + grep, which even busybox has (its grep lacks
        # --exclude-dir and -I, and to ripgrep -I means "no file names").
        command = (
            f"if command -v rg >/dev/null 2>&1; then rg {flags} --with-filename --no-heading "
            f"--hidden -g '!.git'{rg_glob} -e {needle} {where}; "
            f"else find {where} -name .git -prune -o -type f{name} "
            f"-exec grep -H -E {flags} -e {needle} {{}} +; fi"
        )
    else:
        raise ValueError(f"target must be 'content' or 'files', not {target!r}")
    result = backend.run(command, timeout=60, cancel=context.cancel)
    if not result.stdout:
        if result.exit_code in (0, 1) or not result.stderr.strip():
            return "no matches"
        raise RuntimeError(f"search failed: {result.stderr.strip()}")
    lines = result.stdout.splitlines()
    shown = lines[:limit]
    text = "\n".join(shown)[:SEARCH_OUTPUT_CHARS]
    if len(lines) > limit:
        text += f"\n[{len(lines) - limit} more results; narrow the search or raise max_results]"
    return text
