"""A throwaway virtual environment with the kernel, the SDK and real installed plugins.

The plugins under tests/fixtures/plugins are built and installed as distributions, exactly as
a user's ``pip install`` would, so discovery reads real metadata and loading imports real
packages. Built once per test session (a few seconds with uv's cache).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
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


@pytest.fixture
def make_venv(tmp_path: Path) -> Callable[[list[Path]], Venv]:
    """Build a private venv with the given fixture plugin folders (for tests that change it)."""
    return lambda packages: Venv(build_venv(tmp_path / "private-venv", packages))


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HERMES_HOME with a short load deadline so the hanging fixture costs one second."""
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text("plugins:\n  load_timeout_seconds: 1\n")
    return path


HermesRunner = Callable[..., Run]
