"""A plugin's tables outside any command (``hermes_sdk.storage.open_store``): the store of the
home it was given, whatever profile the environment names, by the engine the home's
installed plugins provide."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_sdk.storage import StoreSchema, open_store
from hermes_sdk.tables import Column, ColumnType, Table

NOTES = StoreSchema(
    name="notes",
    declared=((Table("notes_items", (Column("text", ColumnType.TEXT, required=True),)),),),
)


def test_the_home_given_is_the_home_opened_whatever_profile_is_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_PROFILE", "work")  # a chat in the shell may have set it
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    with open_store(home, NOTES) as store:
        with store.write() as cursor:
            cursor.execute("INSERT INTO notes_items (text) VALUES (?)", ("kept",))
        assert store.where == str(home / "state.db")
    assert not (home / "profiles").exists()
    with open_store(str(home), NOTES) as again:
        assert again.query("SELECT text FROM notes_items") == [("kept",)]
