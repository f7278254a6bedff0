"""Where an attached file is kept: in the board's ``kanban/attachments/TASK/``, under its
own name, or ``name (2).ext`` when another file of the task has that name already."""

from __future__ import annotations

from pathlib import Path

__all__ = ["free_path"]


def free_path(folder: Path, name: str) -> Path:
    """A path in ``folder`` (made) for a file named ``name`` that no file has yet."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = Path(Path(name).name)
    candidate, number = folder / wanted, 1
    while candidate.exists():
        number += 1
        candidate = folder / f"{wanted.stem} ({number}){wanted.suffix}"
    return candidate
