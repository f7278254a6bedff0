"""The gateway's tables in a fresh home's state store (through the kernel's store, which
``hermes_sdk.storage.open_store`` finds by its entry point)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_gateway.schema import SCHEMA

from hermes_sdk.platform import ChatRef, Inbound
from hermes_sdk.storage import Store, open_store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def inbound(
    chat_type: str = "private",
    chat_id: str = "5",
    user: str = "5",
    thread: str | None = None,
    message_id: str = "1",
) -> Inbound:
    return Inbound(
        chat=ChatRef("telegram", chat_id, chat_type, thread),
        user_id=user,
        text="hi",
        message_id=message_id,
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A gateway store that several workers may share: a home's state.db, and a database of
    the test kit's PostgreSQL."""
    home = tmp_path / "shared-home"
    home.mkdir()
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres").create_database()
        (home / "config.yaml").write_text(f"store:\n  url: {url}\n")
    with open_store(home, SCHEMA) as store:
        yield store


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    with open_store(home, SCHEMA) as opened:
        yield opened
