"""Whose Chromium is whose: every browser Hermes starts carries its owner's tag on its
command line, and a record under ``HERMES_HOME/browser/owners`` names the owner and the
Playwright driver. A process killed with kill -9 cannot clean up; the next Hermes to start
finds its record, sees the owner is gone, and ends what it left (the driver, the browser and
every child of it, and the browser's temporary profile).

psutil is imported only when a record of a dead owner is found, so a start with nothing
to clean costs one directory listing.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

__all__ = [
    "MARKER",
    "OwnerRecord",
    "browser_trees",
    "clean_leftovers",
    "end_own_browsers",
    "forget",
    "open_records",
    "owner_tag",
    "remember",
    "renderer_processes",
]

log = logging.getLogger(__name__)

MARKER = "--hermes-browser-owner="
"""A switch Chromium ignores, on every browser Hermes starts: ``MARKER + owner_tag()``."""

_PROFILE_PREFIX = "playwright_chromiumdev_profile-"


@dataclass(frozen=True)
class OwnerRecord:
    owner_pid: int
    owner_started: float
    driver_pid: int | None = None
    driver_started: float | None = None

    @property
    def tag(self) -> str:
        return f"{self.owner_pid}-{round(self.owner_started * 1000)}"


def owners_dir(home: str | Path) -> Path:
    return Path(home) / "browser" / "owners"


def _started(pid: int) -> float:
    import psutil

    return float(psutil.Process(pid).create_time())


def owner_tag() -> str:
    """This process's tag (its pid and start time, so a reused pid is not mistaken)."""
    return OwnerRecord(os.getpid(), _started(os.getpid())).tag


def remember(home: str | Path, driver_pid: int | None) -> OwnerRecord:
    """Write this process's record before its browser starts."""
    record = OwnerRecord(
        owner_pid=os.getpid(),
        owner_started=_started(os.getpid()),
        driver_pid=driver_pid,
        driver_started=_started(driver_pid) if driver_pid else None,
    )
    folder = owners_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record.tag}.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(record)))
    os.replace(temporary, path)
    return record


def forget(home: str | Path, record: OwnerRecord) -> None:
    """Remove the record once the browser is closed."""
    (owners_dir(home) / f"{record.tag}.json").unlink(missing_ok=True)


def _read(path: Path) -> OwnerRecord | None:
    try:
        return OwnerRecord(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _alive(pid: int | None, started: float | None) -> bool:
    import psutil

    if not pid or started is None:
        return False
    try:
        return abs(psutil.Process(pid).create_time() - started) < 1.0
    except psutil.Error:
        return False


def _records(home: str | Path) -> list[Path]:
    try:
        return [p for p in owners_dir(home).iterdir() if p.suffix == ".json"]
    except OSError:
        return []  # no browser was ever started from this home


def open_records(home: str | Path) -> tuple[int, int]:
    """How many browsers this home's live Hermes processes have open, and how many records
    dead ones left (ended at the next start)."""
    running = left = 0
    for path in _records(home):
        record = _read(path)
        if record is not None and _alive(record.owner_pid, record.owner_started):
            running += 1
        else:
            left += 1
    return running, left


def clean_leftovers(home: str | Path) -> int:
    """End what browsers of dead owners left behind; how many processes were ended."""
    paths = _records(home)
    if not paths:
        return 0
    stale: dict[str, tuple[Path, OwnerRecord | None]] = {}
    for path in paths:
        record = _read(path)
        if record is None or not _alive(record.owner_pid, record.owner_started):
            stale[record.tag if record else path.stem] = (path, record)
    if not stale:
        return 0
    victims = _leftovers(stale)
    ended = _end(victims)
    for path, _record in stale.values():
        path.unlink(missing_ok=True)
    if ended:
        log.warning("ended %d browser processes left by a Hermes that was killed", ended)
    return ended


def _leftovers(stale: dict[str, tuple[Path, OwnerRecord | None]]) -> list[psutil.Process]:
    import psutil

    victims: dict[int, psutil.Process] = {}
    for _path, record in stale.values():
        if record is not None and _alive(record.driver_pid, record.driver_started):
            assert record.driver_pid is not None  # _alive is False without one
            victims[record.driver_pid] = psutil.Process(record.driver_pid)
    victims.update({process.pid: process for process in _tagged(set(stale))})
    return _with_children(victims)


def _tagged(tags: set[str]) -> list[psutil.Process]:
    import psutil

    marks = {f"{MARKER}{tag}" for tag in tags}
    return [
        process
        for process in psutil.process_iter(["cmdline"])
        if any(argument in marks for argument in process.info.get("cmdline") or [])
    ]


def _with_children(processes: dict[int, psutil.Process]) -> list[psutil.Process]:
    import psutil

    for process in list(processes.values()):
        try:
            for child in process.children(recursive=True):
                processes[child.pid] = child
        except psutil.Error:
            pass
    return list(processes.values())


def end_own_browsers() -> int:
    """End every browser this process started that is still running: for a browser that
    failed to start in time, or that lost its connection, so none is left beside the next."""
    victims = _with_children({process.pid: process for process in _tagged({owner_tag()})})
    return _end(victims) if victims else 0


def _end(victims: list[psutil.Process]) -> int:
    import psutil

    profiles: set[Path] = set()
    for process in victims:
        try:
            for argument in process.cmdline():
                if argument.startswith("--user-data-dir="):
                    profiles.add(Path(argument.split("=", 1)[1]))
        except psutil.Error:
            pass
    ended = 0
    for process in victims:
        try:
            process.kill()
            ended += 1
        except psutil.Error:
            pass
    psutil.wait_procs(victims, timeout=5)
    temporary = Path(tempfile.gettempdir()).resolve()
    for profile in profiles:  # only Playwright's own temporary profiles, nothing else
        if profile.name.startswith(_PROFILE_PREFIX) and profile.resolve().parent == temporary:
            shutil.rmtree(profile, ignore_errors=True)
    return ended


def browser_trees(tag: str | None = None) -> list[int]:
    """The pids of browser processes (Chromium's main process, not its helpers) started by
    Hermes: by the owner ``tag``, or by any owner. For the tests and ``hermes status``."""
    import psutil

    found = []
    for process in psutil.process_iter(["cmdline"]):
        arguments = process.info.get("cmdline") or []
        marks = [a for a in arguments if a.startswith(MARKER)]
        if not marks or any(a.startswith("--type=") for a in arguments):
            continue
        if tag is None or marks[0] == f"{MARKER}{tag}":
            found.append(process.pid)
    return found


def renderer_processes(tag: str | None = None) -> list[psutil.Process]:
    """The renderer processes (one per site or tab) of the browsers :func:`browser_trees`
    finds: for the tests, which count them and kill one to test a crash."""
    import psutil

    found = []
    for pid in browser_trees(tag):
        try:
            children = psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            continue  # it ended meanwhile
        for child in children:
            try:
                if "--type=renderer" in child.cmdline():
                    found.append(child)
            except psutil.Error:
                continue
    return found
