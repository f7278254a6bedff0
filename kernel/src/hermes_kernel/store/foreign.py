"""A state.db written by hermes-agent, met by accident: recognised by its tables and refused
with one line that says how to bring it over, never a "table sessions already exists"."""

from __future__ import annotations

from pathlib import Path

from hermes_kernel.store.errors import StoreError

FOREIGN_TABLES = ("schema_version", "sessions")
"""Tables a hermes-agent state.db has; ours records its version in PRAGMA user_version,
which theirs leaves at 0."""


def foreign_home_fix(home: Path) -> str:
    """The one command that brings it over, into another home: the import only reads it."""
    return (
        f"run `hermes import hermes-agent {home}` with HERMES_HOME set to a new folder, for "
        f"example `HERMES_HOME={home}-new hermes import hermes-agent {home}` (it reads this "
        "home and changes nothing in it)"
    )


def foreign_home_problem(home: Path, evidence: str) -> str:
    return f"{home}: this is a hermes-agent home ({evidence})"


def foreign_home_line(home: Path, evidence: str) -> str:
    """What every command says about a hermes-agent home: what it is, and what to run."""
    return f"{foreign_home_problem(home, evidence)}: {foreign_home_fix(home)}"


class ForeignStoreError(StoreError):
    """state.db is hermes-agent's: refused before anything is written to it."""

    def __init__(self, path: Path) -> None:
        evidence = f"{path.name} is hermes-agent's"
        super().__init__(foreign_home_line(path.parent, evidence))
        self.problem = foreign_home_problem(path.parent, evidence)
        self.fix = foreign_home_fix(path.parent)
