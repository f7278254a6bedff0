"""Helpers for in-process kernel tests: real plugin modules written to a temp folder.

Discovery from installed metadata is tested separately against a real venv (tests/integration);
here the loader, host and CLI get PluginRecords pointing at modules we write.
"""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.plugins.records import PluginRecord
from hermes_kernel.store.state import StateStore
from hermes_sdk import Kind, parse_manifest_key

MakePlugin = Callable[..., PluginRecord]


@pytest.fixture
def hermes_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Callable[..., tuple[int, str, str]]]:
    """``run(*args)`` runs the hermes command in process with every plugin blocked and
    returns (exit code, stdout, stderr); ``run.home`` is its fresh HERMES_HOME."""
    import logging

    from hermes_kernel.cli.main import main

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.delenv("HERMES_PROFILE", raising=False)
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "*")

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr("sys.argv", ["hermes", *args])
        with pytest.raises(SystemExit) as exited:
            main()
        captured = capsys.readouterr()
        return int(exited.value.code or 0), captured.out, captured.err

    run.home = home  # type: ignore[attr-defined]
    yield run
    for handler in list(logging.getLogger("hermes").handlers):
        handler.close()  # the run's log files


@pytest.fixture
def store(tmp_path: Path) -> Iterator[StateStore]:
    """A fresh state.db in a temp folder."""
    state = StateStore(Database(tmp_path / "state.db"))
    yield state
    state.close()


@pytest.fixture
def make_plugin(tmp_path: Path) -> Iterator[MakePlugin]:
    """Write a plugin module and return its record: make_plugin("name", "source", declares=[...])."""
    root = tmp_path / "plugin_modules"
    root.mkdir()
    sys.path.insert(0, str(root))
    created: list[str] = []

    def make(name: str, source: str, declares: list[str] | None = None) -> PluginRecord:
        module = f"hermes_test_plugin_{name.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        (root / f"{module}.py").write_text(textwrap.dedent(source))
        created.append(module)
        parsed: frozenset[tuple[Kind, str]] = frozenset(
            parse_manifest_key(key) for key in (declares or [])
        )
        return PluginRecord(
            name=name,
            target=module,
            distribution=f"hermes-plugin-{name}",
            version="1.0",
            declares=parsed,
            has_manifest=declares is not None,
        )

    yield make
    sys.path.remove(str(root))
    for module in created:
        sys.modules.pop(module, None)
