"""hermes_sdk.testing moved: the kit to hermes-testkit, each fake beside its plugin. A test
written against the old names keeps working for one release, warned; nothing of ours uses
them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", script],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("hermes_sdk.testing.openai_server", "hermes_testkit.openai_server"),
        ("hermes_sdk.testing.plugin_tests", "hermes_testkit.plugin_tests"),
        (
            "hermes_sdk.testing.telegram_server",
            "hermes_plugin_platform_telegram.testing.telegram_server",
        ),
        ("hermes_sdk.testing.postgres", "hermes_plugin_store_postgresql.testing"),
    ],
)
def test_an_old_module_name_warns_and_is_the_module_that_moved(old: str, new: str) -> None:
    said = _run(f"import {old} as a, {new} as b\nassert a is b\n")
    assert f"DeprecationWarning: {old} moved to {new}" in said


def test_an_old_package_name_still_gives_each_class_warned() -> None:
    said = _run(
        "from hermes_sdk.testing import FakeTelegram, PlatformTests\n"
        "from hermes_plugin_platform_telegram.testing import FakeTelegram as moved\n"
        "from hermes_testkit import PlatformTests as kit\n"
        "assert FakeTelegram is moved and PlatformTests is kit\n"
    )
    assert "hermes_sdk.testing.FakeTelegram moved to hermes_plugin_platform_telegram" in said
    assert "hermes_sdk.testing.PlatformTests moved to hermes_testkit.PlatformTests" in said


def test_nothing_of_ours_uses_an_old_name() -> None:
    old = re.compile(r"\bhermes_sdk\.testing\b")
    shims = REPO / "sdk" / "src" / "hermes_sdk" / "testing"
    roots = [REPO / name for name in ("sdk", "commons", "testkit", "kernel", "tests", "docs")]
    roots += sorted((REPO / "plugins").glob("*"))
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for root in roots
        for path in root.rglob("*")
        if path.suffix in {".py", ".tmpl", ".md", ".toml"}
        and shims not in path.parents
        and path.name not in {"test_old_names.py", "README.md"}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if old.search(line)
    ]
    assert not found, "use hermes_testkit or the plugin's .testing: " + ", ".join(found)
