"""The modules that moved from hermes-sdk to hermes-commons: a plugin written against the old
names keeps working for one release, warned; nothing of ours uses them."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BORN_HERE = {
    "references",
    "sqlite_copy",
    "app_api",
    "byte_split",
    "credential_states",
    "hosting",
    "library_logs",
    "listener_routes",
    "outbox",
    "own_loop",
    "read_positions",
    "reasoning",
    "running",
    "sending",
    "skill_md",
    "stated_models",
    "supervision",
    "wake_words",
}
"""Modules written in the commons, never in the SDK: they have no old name."""
MOVED = sorted(
    path.stem
    for path in (REPO / "commons" / "src" / "hermes_commons").glob("*.py")
    if not path.stem.startswith("_") and path.stem not in BORN_HERE
)


def test_every_moved_module_has_its_old_name_in_the_sdk() -> None:
    for name in MOVED:
        shim = REPO / "sdk" / "src" / "hermes_sdk" / f"{name}.py"
        assert shim.is_file(), f"hermes_sdk.{name} is missing: old imports of it would fail"
        assert f'moved(__name__, "hermes_commons.{name}")' in shim.read_text()


@pytest.mark.parametrize("name", ["files", "text", "ssrf"])
def test_an_old_name_warns_and_is_the_very_module_that_moved(name: str) -> None:
    # A fresh interpreter: this one may have imported the old name already (no second warning).
    script = (
        "import warnings, sys\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        f"    import hermes_sdk.{name} as old\n"
        f"import hermes_commons.{name} as new\n"
        "assert old is new, (old, new)\n"
        "print(caught[0].category.__name__, caught[0].message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"DeprecationWarning hermes_sdk.{name} moved to hermes_commons.{name}"
    )
    assert "goes in hermes-sdk 0.3" in done.stdout


def test_nothing_of_ours_imports_an_old_name() -> None:
    old = re.compile(rf"\bhermes_sdk\.({'|'.join(MOVED)})\b")
    shims = {REPO / "sdk" / "src" / "hermes_sdk" / f"{name}.py" for name in MOVED}
    roots = [REPO / "sdk" / "src", REPO / "commons" / "src", REPO / "kernel" / "src"]
    roots += sorted((REPO / "plugins").glob("*/src"))
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for root in roots
        for path in root.rglob("*.py")
        if path not in shims
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if old.search(line)
    ]
    assert not found, "import these from hermes_commons: " + ", ".join(found)


def test_the_commons_import_nothing_from_the_kernel() -> None:
    for path in (REPO / "commons" / "src").rglob("*.py"):
        assert "hermes_kernel" not in path.read_text(encoding="utf-8"), path
    assert importlib.import_module("hermes_commons").__version__
