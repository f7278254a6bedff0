"""Real hermes-agent plugins from PyPI, installed with pip and enabled as their READMEs say,
run on Hermes through the compat-hermes-agent plugin and do what they do on hermes-agent
0.19 (each was checked there). The exact versions are pinned: a new release may change what
they print."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from hermes_sdk.testing import Reply

from .conftest import REPO, Venv, build_venv

pytestmark = pytest.mark.venv

PYPI_PLUGINS = [
    "noisegate-hermes==0.3.3",
    "hermesguardian==0.1.0",
    "hermes-loop-plugin==1.0.2",
    "scythe-hermes-plugin==0.20.0",
    "hermes-token-consumption-tracker==1.3.1",
    "hermes-local-memory==0.3.1",
]
OUR_PLUGINS = [
    "store-sqlite",
    "chat",
    "providers",
    "approvals",
    "provider-openai",
    "backend-local",
    "toolset-terminal",
    "memory-builtin",
    "skills",
    "compat-hermes-agent",
]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    path = tmp_path_factory.mktemp("hermes-agent-plugins") / "venv"
    made = Venv(build_venv(path, [REPO / "plugins" / name for name in OUR_PLUGINS]))
    made.pip("install", "-q", *PYPI_PLUGINS)
    return made


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """A user's home folder; Hermes's home is ~/.hermes in it (some plugins write there)."""
    return tmp_path / "user"


@pytest.fixture
def home(user: Path, openai_server) -> Path:
    path = user / ".hermes"
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\napprovals:\n  mode: 'off'\n"
    )
    return path


def hermes(venv: Venv, home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home.parent), "HERMES_HOME": str(home), "PATH": f"{venv.path / 'bin'}:/usr/bin:/bin"}
    return subprocess.run(
        [str(venv.path / "bin" / "hermes"), *args],
        env=env,
        cwd=cwd or home.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def enable(venv: Venv, home: Path, name: str) -> None:
    done = hermes(venv, home, "plugins", "enable", name)
    assert done.returncode == 0, done.stderr
    assert f"{name} (hermes-agent entry point" in done.stdout


def tool_result(openai_server, call_id_index: int = -1) -> str:
    """The tool result the model was sent last."""
    messages = openai_server.requests[call_id_index].json["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "tool")


def test_noisegate_compacts_a_long_terminal_output(venv, home, openai_server):
    enable(venv, home, "noisegate")
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "seq 1 3000"}), Reply.say("done")
    )
    done = hermes(venv, home, "chat", "-q", "count")
    assert done.returncode == 0, done.stderr
    result = tool_result(openai_server)
    assert "[noisegate: omitted 2960 lines]" in result, result[:2000]
    lines = result.replace("\\n", "\n").splitlines()
    for kept in [*range(1, 25), *range(2985, 3001)]:
        assert any(line.strip().strip('"').endswith(str(kept)) for line in lines), kept
    assert "\n1500\n" not in result.replace("\\n", "\n")
