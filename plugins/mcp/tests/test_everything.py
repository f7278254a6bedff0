"""The MCP reference server ``@modelcontextprotocol/server-everything`` (npm, installed here
with the machine's node) over stdio, streamable HTTP and the older SSE transport, through the plugin's tool
source exactly as the kernel drives it: tools listed and called, an image described, a
resource read, a prompt fetched, and the progress of a long-running operation seen."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_mcp.source import McpServers

from hermes_sdk.tool_sources import ToolSourceContext

PACKAGE = "@modelcontextprotocol/server-everything"
REQUIRED = os.environ.get("HERMES_REQUIRE_SERVICES") == "1"


@pytest.fixture(scope="session")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's executable, installed by npm into a folder of this test run."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        if REQUIRED:
            pytest.fail("node and npm are needed: apt-get install nodejs npm")
        pytest.skip("node and npm are not installed (apt-get install nodejs npm)")
    folder = tmp_path_factory.mktemp("npm")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--silent", PACKAGE],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        message = f"npm install {PACKAGE} failed: {done.stderr.strip()[-300:]}"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return folder / "node_modules" / ".bin" / "mcp-server-everything"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(everything: Path, mode: str) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [str(everything), mode],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def http_server(everything: Path) -> Iterator[str]:
    for port in serve(everything, "streamableHttp"):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def sse_server(everything: Path) -> Iterator[str]:
    for port in serve(everything, "sse"):
        yield f"http://127.0.0.1:{port}/sse"


def source(tmp_path: Path, entry: dict[str, Any]) -> McpServers:
    return McpServers(
        ToolSourceContext(
            home=str(tmp_path), cwd=str(tmp_path), config={"mcp_servers": {"everything": entry}}
        )
    )


async def exercise(servers: McpServers) -> dict[str, Any]:
    await servers.start()
    try:
        assert not servers.problems(), servers.problems()
        tools = {spec.name: spec for spec in servers.tools()}
        seen: list[tuple[str, str]] = []
        servers.connections["everything"].progress = lambda tool, text: seen.append((tool, text))
        echoed = await tools["mcp_everything_echo"].handler(message="hello, everything")
        image = await tools["mcp_everything_get-tiny-image"].handler()
        resources = await tools["mcp_everything_list_resources"].handler()
        first = next(line.split()[0] for line in resources.splitlines() if line.strip())
        read = await tools["mcp_everything_read_resource"].handler(uri=first)
        prompt = await tools["mcp_everything_get_prompt"].handler(name="simple-prompt")
        operation = await tools["mcp_everything_trigger-long-running-operation"].handler(
            duration=1, steps=2
        )
        return {
            "tools": tools,
            "echoed": echoed,
            "image": image,
            "read": read,
            "prompt": prompt,
            "operation": operation,
            "progress": seen,
        }
    finally:
        await servers.aclose()


def check(outcome: dict[str, Any]) -> None:
    assert "hello, everything" in outcome["echoed"]
    assert "[image: image/png" in outcome["image"]  # described, not dropped
    assert outcome["read"].strip() and outcome["read"] != "(empty)"
    assert outcome["prompt"].startswith("[user]")
    assert "Long running operation completed" in outcome["operation"]
    assert len(outcome["progress"]) == 2, outcome["progress"]
    assert all(tool == "trigger-long-running-operation" for tool, _ in outcome["progress"])
    assert outcome["tools"]["mcp_everything_echo"].toolset == "mcp-everything"


def test_everything_over_stdio(everything: Path, tmp_path: Path) -> None:
    check(asyncio.run(exercise(source(tmp_path, {"command": str(everything)}))))


def test_everything_over_streamable_http(http_server: str, tmp_path: Path) -> None:
    check(asyncio.run(exercise(source(tmp_path, {"url": http_server}))))


def test_everything_over_the_older_sse_transport(sse_server: str, tmp_path: Path) -> None:
    check(asyncio.run(exercise(source(tmp_path, {"url": sse_server, "transport": "sse"}))))
