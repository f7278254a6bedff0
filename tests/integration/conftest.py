"""A throwaway virtual environment with the kernel, the SDK and real installed plugins.

The plugins under tests/fixtures/plugins are built and installed as distributions, exactly as
a user's ``pip install`` would, so discovery reads real metadata and loading imports real
packages. Built once per test session (a few seconds with uv's cache).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "plugins"


def uv_command() -> str:
    beside_python = Path(sys.executable).parent / "uv"
    found = str(beside_python) if beside_python.exists() else shutil.which("uv")
    if found is None:
        pytest.fail("uv is not installed; run the tests through ./scripts/test, which installs it")
    return found


def build_venv(path: Path, packages: list[Path]) -> Path:
    """Create a venv at ``path`` and install ``packages`` (with the kernel and SDK) into it."""
    uv = uv_command()
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True, env=env)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "-q",
            # Compile bytecode as pip does: otherwise every run pays for compiling (more so
            # where PYTHONDONTWRITEBYTECODE is set) and start-up figures mean nothing.
            "--compile-bytecode",
            "--python",
            str(path / "bin" / "python"),
            str(REPO / "sdk"),
            str(REPO / "commons"),
            str(REPO / "kernel"),
            *map(str, packages),
        ],
        check=True,
        env=env,
    )
    return path


@dataclass
class Run:
    code: int
    out: str
    err: str


@dataclass
class Venv:
    path: Path

    def pip(self, *args: str) -> None:
        """Run ``uv pip ARGS`` against this venv (install, uninstall ...)."""
        python = str(self.path / "bin" / "python")
        subprocess.run([uv_command(), "pip", *args, "--python", python], check=True)

    def hermes(
        self, *args: str, home: Path, env: dict[str, str] | None = None, timeout: float = 60
    ) -> Run:
        environ = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("HERMES_") and key != "VIRTUAL_ENV"
        }
        environ.update({"HERMES_HOME": str(home), **(env or {})})
        done = subprocess.run(
            [str(self.path / "bin" / "hermes"), *args],
            env=environ,
            capture_output=True,
            check=False,
            text=True,
            timeout=timeout,
        )
        return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="session")
def plugin_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    packages = sorted(p for p in FIXTURES.iterdir() if (p / "pyproject.toml").exists())
    packages.append(REPO / "docs" / "examples" / "hermes-plugin-hello")
    return Venv(build_venv(tmp_path_factory.mktemp("venv") / "venv", packages))


@pytest.fixture(scope="session")
def bare_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """Nothing installed but the kernel and the SDK."""
    return Venv(build_venv(tmp_path_factory.mktemp("bare") / "venv", []))


@pytest.fixture(scope="session")
def fault_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """The state store in the home, the chat and its sessions, the provider ladder and the
    OpenAI-compatible provider, the local backend, its command rules and the terminal
    toolset, the gateway and Telegram, the web UI, and the fixture plugins that misbehave
    at run time on request (tests/fixtures/faulty, and faulty-panel: a dashboard page)."""
    packages = [
        REPO / "plugins" / "store-sqlite",
        REPO / "plugins" / "chat",
        REPO / "plugins" / "sessions",
        REPO / "plugins" / "providers",
        REPO / "plugins" / "approvals",
        REPO / "plugins" / "provider-openai",
        REPO / "plugins" / "backend-local",
        REPO / "plugins" / "toolset-terminal",
        REPO / "plugins" / "gateway",
        REPO / "plugins" / "platform-telegram",
        REPO / "plugins" / "web-ui",
        REPO / "tests" / "fixtures" / "faulty",
        REPO / "tests" / "fixtures" / "faulty-panel",
    ]
    return Venv(build_venv(tmp_path_factory.mktemp("faults") / "venv", packages))


@pytest.fixture
def make_venv(tmp_path: Path) -> Callable[[list[Path]], Venv]:
    """Build a private venv with the given fixture plugin folders (for tests that change it)."""
    return lambda packages: Venv(build_venv(tmp_path / "private-venv", packages))


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HERMES_HOME with a short load deadline, so the hanging fixture costs two seconds (one
    would fail a sound plugin when both test workers and a build share the two cores)."""
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text("plugins:\n  load_timeout_seconds: 2\n")
    return path


HermesRunner = Callable[..., Run]


# --- the chat in a pseudo-terminal ------------------------------------------------------------


@pytest.fixture(scope="session")
def chat_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """The state store in the home, the terminal chat and its sessions, the provider ladder
    and the OpenAI-compatible provider, the local backend with its command rules and the terminal toolset, the default
    context engine, the MCP client, and a fixture plugin with tools and slash commands."""
    packages = [
        REPO / "plugins" / "store-sqlite",
        REPO / "plugins" / "chat",
        REPO / "plugins" / "sessions",
        REPO / "plugins" / "providers",
        REPO / "plugins" / "approvals",
        REPO / "plugins" / "provider-openai",
        REPO / "plugins" / "backend-local",
        REPO / "plugins" / "toolset-terminal",
        REPO / "plugins" / "context-summary",
        REPO / "plugins" / "mcp",
        REPO / "tests" / "fixtures" / "chat-tools",
    ]
    return Venv(build_venv(tmp_path_factory.mktemp("chat") / "venv", packages))


@pytest.fixture
def chat_home(tmp_path: Path, openai_server) -> Path:
    """A HERMES_HOME whose model is the scripted server, with one retry (errors come fast)."""
    path = tmp_path / "chat-home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\n"
    )
    return path


_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]|\x1b[=>]")


class Terminal:
    """A real ``hermes`` in a pseudo-terminal (pexpect), its screen kept by a terminal
    emulator (pyte), so tests assert on what a user would see."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int = 40, cols: int = 110):
        import pexpect
        import pyte

        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.log = b""
        self.child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(rows, cols))

    def pump(self, seconds: float = 0.05) -> None:
        import pexpect

        deadline = time.monotonic() + seconds
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.02)
            except pexpect.TIMEOUT:
                data = b""
            except pexpect.EOF:
                return
            if data:
                self.log += data
                self.stream.feed(data)
            if time.monotonic() >= deadline:
                return

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    @property
    def seen(self) -> str:
        """Everything ever printed, escapes removed (text that scrolled away included)."""
        return _ANSI.sub(b"", self.log).decode("utf-8", "replace")

    def wait_for(self, needle: str, timeout: float = 15.0, *, in_log: bool = False) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump(0.05)
            if needle in (self.seen if in_log else self.text):
                return
            if not self.child.isalive():
                self.pump(0.2)
                if needle in (self.seen if in_log else self.text):
                    return
                break
        raise AssertionError(f"{needle!r} never appeared; the screen:\n{self.text}")

    def type(self, text: str) -> None:
        self.child.send(text)
        self.pump(0.1)

    def line(self, text: str) -> None:
        self.child.send(text)
        self.pump(0.1)
        self.child.send("\r")

    def ctrl(self, letter: str) -> None:
        self.child.send(chr(ord(letter.lower()) - ord("a") + 1))

    def wait_exit(self, timeout: float = 15.0) -> int:
        deadline = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < deadline:
            self.pump(0.1)
        assert not self.child.isalive(), f"hermes did not exit; the screen:\n{self.text}"
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def terminal_env(home: Path) -> dict[str, str]:
    """The environment of a hermes in a pseudo-terminal, on ``home``."""
    env = {
        key: value
        for key, value in os.environ.items()
        # COLUMNS and LINES would override the pseudo-terminal's own size (pytest's
        # workers set them): the screen is the terminal's.
        if not key.startswith("HERMES_") and key not in {"VIRTUAL_ENV", "COLUMNS", "LINES"}
    }
    # No cursor-position requests: the emulator does not answer them.
    env.update({"HERMES_HOME": str(home), "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"})
    return env


@pytest.fixture
def terminal(chat_venv: Venv) -> Iterator[Callable[..., Terminal]]:
    opened: list[Terminal] = []

    def open_terminal(*args: str, home: Path, rows: int = 40) -> Terminal:
        env = terminal_env(home)
        opened.append(Terminal([str(chat_venv.path / "bin" / "hermes"), *args], env, rows))
        return opened[-1]

    yield open_terminal
    for term in opened:
        term.close()
