"""One of hermes-agent's backup zips (``hermes backup`` there) as a home to import.

hermes-agent 0.19's ``hermes_cli/backup.py`` zips HERMES_HOME's files at the zip's root
(or under ``.hermes/`` or ``hermes/`` when someone zipped the folder itself), its databases
copied with SQLite's backup API, and files a memory provider keeps outside the home under
``_external/``. The zip is unpacked once into a private temporary folder (0700) that lives
as long as the importer; entries that would land outside it are refused, and ``_external/``
is left out (those files were never part of the home).
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from hermes_sdk.importing import ImportRefused

__all__ = ["UnpackedZips", "is_backup_zip"]

_PREFIXES = (".hermes", "hermes")
_EXTERNAL = "_external"


def is_backup_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


def _prefix(names: list[str]) -> str:
    """``.hermes/`` when every entry is under it (a zipped folder), else nothing."""
    names = [name.replace("\\", "/") for name in names]
    firsts = {
        PurePosixPath(name).parts[0]
        for name in names
        if name and not name.endswith("/") and not name.startswith(_EXTERNAL + "/")
    }
    if len(firsts) == 1:
        (only,) = firsts
        if only in _PREFIXES:
            return only + "/"
    return ""


class UnpackedZips:
    """Each zip unpacked once, for as long as this object lives."""

    def __init__(self) -> None:
        self._folders: dict[Path, tempfile.TemporaryDirectory[str]] = {}

    def home_of(self, zip_path: Path) -> Path:
        key = zip_path.resolve()
        if key not in self._folders:
            folder = tempfile.TemporaryDirectory(prefix="hermes-agent-backup-")
            try:
                _unpack(zip_path, Path(folder.name))
            except BaseException:
                folder.cleanup()
                raise
            self._folders[key] = folder
        return Path(self._folders[key].name)


def _unpack(zip_path: Path, into: Path) -> None:
    try:
        archive = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile as exc:
        raise ImportRefused(f"{zip_path} is not a readable zip ({exc})") from None
    with archive:
        names = archive.namelist()
        prefix = _prefix(names)
        for entry in archive.infolist():
            # Zips made on Windows (PowerShell's Compress-Archive) may separate with "\".
            name = entry.filename.replace("\\", "/")
            if entry.is_dir() or name.endswith("/") or not name.startswith(prefix):
                continue
            relative = PurePosixPath(name[len(prefix) :])
            if not relative.parts or relative.parts[0] == _EXTERNAL:
                continue
            if relative.is_absolute() or ".." in relative.parts or ":" in relative.parts[0]:
                raise ImportRefused(
                    f"{zip_path} holds {name!r}, a path outside the home: it was not imported"
                )
            mode = entry.external_attr >> 16
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                continue  # a link: never followed out of the backup
            target = into / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(entry) as data, target.open("wb") as out:
                shutil.copyfileobj(data, out, 1 << 20)
