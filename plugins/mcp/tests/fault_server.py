"""An MCP server of the tests' own, on the SDK, that misbehaves on request.

    python fault_server.py [--start-delay S] [--fail-start] [--fail-if PATH] [--marks DIR]

Tools: ``echo`` (read-only), ``write_line`` (appends to a file: a side effect), ``hang``
(never answers, until cancelled: it records that it was), ``crash`` (the process exits at
once), ``progress`` (reports progress twice), ``secret_error`` (fails with a token in the
message) and ``environment`` (the names of its environment variables). It also offers one resource and one prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("--start-delay", type=float, default=0.0)
parser.add_argument("--fail-start", action="store_true")
parser.add_argument("--fail-if", default=None, help="fail to start while this file exists")
parser.add_argument("--marks", default=None, help="a folder for what the tests check")
options = parser.parse_args()

if options.fail_start or (options.fail_if and os.path.exists(options.fail_if)):
    print("fault_server: refusing to start", file=sys.stderr)
    sys.exit(3)
time.sleep(options.start_delay)  # a slow start: before the server reads anything

marks = Path(options.marks) if options.marks else None
if marks is not None:
    (marks / f"pid-{os.getpid()}").write_text("started")
server = MCPServer("faults")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def write_line(path: str, line: str) -> str:
    """Append a line to a file."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(line + "\n")
    return f"wrote {line!r} to {path}"


@server.tool()
async def hang() -> str:
    """Never answer."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        if marks is not None:
            (marks / "hang-cancelled").write_text("cancelled")
        raise
    return "never"


@server.tool()
def crash() -> str:
    """Exit the process."""
    os._exit(7)


@server.tool()
async def progress(ctx: Context) -> str:
    """Report progress, then finish."""
    await ctx.report_progress(1, 2, "halfway")
    await ctx.report_progress(2, 2, "done")
    return "progressed"


@server.tool()
async def slow_progress(ctx: Context) -> str:
    """Report progress, take a while, then finish."""
    await ctx.report_progress(1, 2, "halfway")
    await asyncio.sleep(3)
    await ctx.report_progress(2, 2, "done")
    return "slowly progressed"


@server.tool()
def secret_error() -> CallToolResult:
    """Fail, mentioning a token."""
    text = "upstream refused token=abc123secret and ghp_abcdefghijklmnopqrstuvwxyz12"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def environment() -> str:
    """The names of this process's environment variables, and GREETING's value."""
    return " ".join(sorted(os.environ)) + f" | GREETING={os.environ.get('GREETING')}"


@server.resource("note://today")
def today() -> str:
    """Today's note."""
    return "buy milk"


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {name}."


server.run()
