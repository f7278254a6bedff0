"""A state.db that is not ours (it has tables, but no schema version of ours: another tool's,
met by accident) is refused before anything is written to it, never a "table sessions already
exists". Whose it is, and how to bring it over, is an importer's to say (see
:mod:`hermes_kernel.foreign_homes`)."""

from __future__ import annotations

from pathlib import Path

from hermes_kernel.store.errors import StoreError


class ForeignStoreError(StoreError):
    """state.db is not a Hermes store: refused, and left as it was."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem = f"{path}: not a Hermes state store (it has tables, but no version of ours)"
        self.fix = (
            "point HERMES_HOME at another folder, or move the file aside and Hermes will "
            "create a new one"
        )
        super().__init__(f"{self.problem}: {self.fix}")
