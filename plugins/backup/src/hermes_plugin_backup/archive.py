"""A home as one zip, and back.

Files go in with their mode and time. A SQLite database is never copied as bytes: a file
copied while Hermes writes to it can be torn (half a transaction, a WAL not folded in). It
is copied with SQLite's online backup API in one step, which reads one consistent snapshot
while writers carry on (WAL), and the copy is checked (``quick_check``) before it goes in.
Its ``-wal``/``-shm``/``-journal`` companions are folded into that copy and left out.

Left out as well: ``cache/`` and any folder tagged as a cache (``CACHEDIR.TAG``), records
of processes that ran (``*.pid``,
``*.lock``, ``browser/owners``), sockets and other special files, and symbolic links (named
in the report: a link's target is not the home's). ``.env`` goes in only when asked.

A restore unpacks into a folder beside the home, checks every database there, and only then
moves the files in, so a bad zip changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import stat
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = [
    "MANIFEST",
    "BackupError",
    "BackupReport",
    "RestoreReport",
    "home_is_empty",
    "restore_backup",
    "write_backup",
]

MANIFEST = "hermes-backup.json"
FORMAT = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
_COMPANIONS = ("-wal", "-shm", "-journal")
_LEFT_OUT_DIRS = {"cache"}
_LEFT_OUT_PATHS = {"browser/owners"}
_LEFT_OUT_SUFFIXES = (".pid", ".lock")
SECRETS = ".env"
_RUNTIME_ONLY = {"cache", "logs"}
"""What a command leaves in a home by merely running (the plugin discovery cache, a log
line): a home holding only these is empty for a restore."""


class BackupError(Exception):
    """One line to act on: what is wrong with the backup, the zip or the home."""


@dataclass
class BackupReport:
    path: Path
    files: int = 0
    databases: list[str] = field(default_factory=list)
    secrets: bool = False
    skipped_links: list[str] = field(default_factory=list)
    skipped_names: list[str] = field(default_factory=list)
    """Files whose names are not UTF-8 (a zip cannot name them portably)."""
    bytes_written: int = 0


@dataclass
class RestoreReport:
    files: int = 0
    databases: list[str] = field(default_factory=list)
    secrets: bool = False
    saved_first: Path | None = None
    """The backup of the home as it was, when ``--force`` replaced it."""


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _companion_of_database(path: Path) -> bool:
    for suffix in _COMPANIONS:
        if path.name.endswith(suffix):
            main = path.with_name(path.name[: -len(suffix)])
            if main.is_file() and _is_sqlite(main):
                return True
    return False


SIGN_INS = "auth.json"
"""The sign-ins' tokens (the auth plugin's): as secret as .env."""


def is_secrets(relative: PurePosixPath) -> bool:
    """A ``.env`` (or ``.env.NAME``) anywhere, the home's or a profile's, and the sign-ins'
    ``auth.json``."""
    name = relative.name
    return name in (SECRETS, SIGN_INS) or name.startswith(SECRETS + ".")


def _left_out(relative: PurePosixPath, include_secrets: bool) -> bool:
    if relative.parts[0] in _LEFT_OUT_DIRS:
        return True
    if any(str(relative).startswith(prefix) for prefix in _LEFT_OUT_PATHS):
        return True
    if relative.name.endswith(_LEFT_OUT_SUFFIXES):
        return True
    if "-before-restore-" in relative.name and relative.suffix == ".zip":
        return True  # a restore's safety copy of a home, secrets and all
    return is_secrets(relative) and not include_secrets


CACHEDIR_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
"""A folder holding a CACHEDIR.TAG that starts with this is a cache (the Cache Directory
Tagging Specification, which backup tools honour): it is left out, whoever made it."""


def _is_cache(folder: Path) -> bool:
    try:
        with (folder / "CACHEDIR.TAG").open("rb") as tag:
            return tag.read(len(CACHEDIR_SIGNATURE)) == CACHEDIR_SIGNATURE
    except OSError:
        return False


def _walk(home: Path) -> Iterator[tuple[Path, PurePosixPath]]:
    for folder, names, files in os.walk(home):
        names[:] = sorted(name for name in names if not _is_cache(Path(folder) / name))
        for name in sorted(files) + [n for n in names if (Path(folder) / n).is_symlink()]:
            path = Path(folder) / name
            yield path, PurePosixPath(path.relative_to(home).as_posix())


def _copy_database(source: Path, target: Path) -> None:
    """``source`` copied to ``target`` in one consistent snapshot, and checked."""
    # Read-only, and no waiting forever for a writer that holds the file.
    try:
        reader = sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True, timeout=30)
        writer = sqlite3.connect(target)
        try:
            reader.backup(writer)  # pages=-1: the whole database, one step, one read snapshot
            result = writer.execute("PRAGMA quick_check").fetchone()
        finally:
            writer.close()
            reader.close()
    except sqlite3.Error as exc:
        raise BackupError(
            f"{source} looks like a database but SQLite cannot copy it ({exc}); repair it or "
            "move it out of the home, then back up again"
        ) from None
    if not result or result[0] != "ok":
        raise BackupError(f"{source}: the copy failed its check ({result}); nothing was written")


def _zip_info(relative: str, info: os.stat_result) -> zipfile.ZipInfo:
    entry = zipfile.ZipInfo(relative, time.localtime(max(info.st_mtime, 315_532_800))[:6])
    entry.external_attr = (stat.S_IFMT(info.st_mode) | stat.S_IMODE(info.st_mode)) << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


def write_backup(home: Path, target: Path, *, include_secrets: bool, version: str) -> BackupReport:
    """Write ``home`` to the zip ``target`` (mode 0600, replaced only when complete)."""
    if not home.is_dir() or home_is_empty(home):
        raise BackupError(f"{home} holds nothing to back up: is HERMES_HOME (or -p) right?")
    report = BackupReport(target)
    partial = target.with_name(target.name + ".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    inside_home = target.resolve().is_relative_to(home.resolve())
    try:
        with (
            tempfile.TemporaryDirectory(prefix="hermes-backup-") as scratch,
            zipfile.ZipFile(partial, "w", allowZip64=True) as archive,
        ):
            entries: list[dict[str, object]] = []
            for path, relative in _walk(home):
                if inside_home and path.resolve() in (target.resolve(), partial.resolve()):
                    continue  # the backup itself, written into the home
                try:
                    str(relative).encode("utf-8")
                except UnicodeEncodeError:
                    report.skipped_names.append(str(relative).encode("utf-8", "replace").decode())
                    continue
                if _left_out(relative, include_secrets):
                    continue
                if path.is_symlink():
                    report.skipped_links.append(str(relative))
                    continue
                info = path.lstat()
                if not stat.S_ISREG(info.st_mode) or _companion_of_database(path):
                    continue
                if _is_sqlite(path):
                    copy = Path(scratch) / f"{len(report.databases)}.db"
                    _copy_database(path, copy)
                    with (
                        copy.open("rb") as data,
                        archive.open(_zip_info(str(relative), info), "w", force_zip64=True) as out,
                    ):
                        shutil.copyfileobj(data, out, 1 << 20)
                    copy.unlink()
                    report.databases.append(str(relative))
                else:
                    with (
                        path.open("rb") as data,
                        archive.open(_zip_info(str(relative), info), "w", force_zip64=True) as out,
                    ):
                        shutil.copyfileobj(data, out, 1 << 20)
                report.secrets = report.secrets or is_secrets(relative)
                report.files += 1
                entries.append({"path": str(relative), "mode": stat.S_IMODE(info.st_mode)})
            manifest = {
                "format": FORMAT,
                "created_at": time.time(),
                "hermes": version,
                "home": str(home),
                "secrets": report.secrets,
                "databases": report.databases,
                "files": len(entries),
            }
            archive.writestr(MANIFEST, json.dumps(manifest, indent=2) + "\n")
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    report.bytes_written = target.stat().st_size
    return report


# --- restore --------------------------------------------------------------------------------


def home_is_empty(home: Path, ignore: set[str] | None = None) -> bool:
    """Nothing but what a command leaves by running (``cache/``, ``logs/``) is there."""
    if not home.exists():
        return True
    skipped = _RUNTIME_ONLY | (ignore or set())
    return all(entry.name in skipped for entry in home.iterdir())


def _manifest(archive: zipfile.ZipFile, zip_path: Path) -> dict[str, object]:
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except KeyError:
        names = set(archive.namelist())
        looks_like_theirs = any(
            name.rstrip("/").split("/")[-1] in ("state.db", "config.yaml") for name in names
        )
        hint = (
            f": if it is hermes-agent's, bring it over with `hermes import hermes-agent {zip_path}`"
            if looks_like_theirs
            else ""
        )
        raise BackupError(
            f"{zip_path} is not a Hermes backup (it has no {MANIFEST}){hint}"
        ) from None
    except ValueError as exc:
        raise BackupError(f"{zip_path}: its {MANIFEST} is not readable ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(
            f"{zip_path} was written by a Hermes whose backups this one cannot read "
            f"(format {manifest.get('format') if isinstance(manifest, dict) else '?'}); "
            "upgrade Hermes and try again"
        )
    return manifest


def _safe_name(name: str) -> PurePosixPath | None:
    """The entry's path inside the home, or None for one that would land outside it."""
    path = PurePosixPath(name)
    drive = len(name) > 1 and name[1] == ":" and name[0].isalpha()  # C:... on Windows
    if path.is_absolute() or ".." in path.parts or name.startswith(("\\", "/")) or drive:
        return None
    return path


def _unpack(archive: zipfile.ZipFile, into: Path, report: RestoreReport) -> None:
    for entry in archive.infolist():
        if entry.filename == MANIFEST or entry.is_dir():
            continue
        relative = _safe_name(entry.filename)
        if relative is None:
            raise BackupError(f"the zip holds {entry.filename!r}, a path outside the home: refused")
        mode = entry.external_attr >> 16
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            continue  # a link or a device: only regular files are ever written
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with archive.open(entry) as data, target.open("wb") as out:
            shutil.copyfileobj(data, out, 1 << 20)
        # Never a set-id bit or a mode others may write through, whatever the zip says.
        os.chmod(target, (stat.S_IMODE(mode) & 0o755) if mode else 0o600)
        modified = time.mktime((*entry.date_time, 0, 0, -1))
        os.utime(target, (modified, modified))
        if _is_sqlite(target):
            _check_database(target, relative)
            report.databases.append(str(relative))
        report.secrets = report.secrets or is_secrets(relative)
        report.files += 1


def _check_database(path: Path, relative: PurePosixPath) -> None:
    connection = sqlite3.connect(path)
    try:
        result = connection.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        result = (str(exc),)
    finally:
        connection.close()
    if not result or result[0] != "ok":
        why = result[0] if result else "?"
        raise BackupError(f"{relative} in the backup is damaged ({why}); nothing was restored")


def _in_use(home: Path) -> str | None:
    """A process record of the home (``*.pid``, ``*.lock``) that a running process holds
    (a gateway holds one for as long as it runs), if any."""
    from hermes_commons.locks import lock_holder

    for path, relative in _walk(home):
        if relative.name.endswith(_LEFT_OUT_SUFFIXES) and lock_holder(path) is not None:
            return str(relative)
    return None


def _swap(home: Path, staging: Path, aside: Path) -> None:
    """Move the home's entries aside, then the restored ones in; on any failure the moved
    entries go back, so the home is never left half-replaced."""
    own = {staging.name, aside.name}
    moved_aside: list[str] = []
    moved_in: list[str] = []
    try:
        for entry in sorted(home.iterdir()):
            if entry.name not in own:
                os.replace(entry, aside / entry.name)
                moved_aside.append(entry.name)
        for entry in sorted(staging.iterdir()):
            os.replace(entry, home / entry.name)
            moved_in.append(entry.name)
    except BaseException:
        for name in moved_in:
            with contextlib.suppress(OSError):
                os.replace(home / name, staging / name)
        for name in moved_aside:
            with contextlib.suppress(OSError):
                os.replace(aside / name, home / name)
        raise


def restore_backup(
    zip_path: Path, home: Path, *, force: bool, version: str, stamp: str
) -> RestoreReport:
    """Put the backup ``zip_path`` in ``home``. A home that is not empty is refused unless
    ``force``; then it is backed up first (with its secrets) beside itself."""
    if not zip_path.is_file():
        raise BackupError(f"{zip_path}: no such file")
    try:
        archive = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile as exc:
        raise BackupError(f"{zip_path} is not a zip file ({exc})") from None
    report = RestoreReport()
    with archive:
        _manifest(archive, zip_path)
        if not home_is_empty(home):
            if not force:
                raise BackupError(
                    f"{home} is not empty: restore into an empty home (HERMES_HOME=NEW hermes "
                    "restore ...), or add --force to replace it (it is backed up first)"
                )
            busy = _in_use(home)
            if busy is not None:
                raise BackupError(
                    f"{home} is in use: a running process holds {busy} (a gateway?); stop it first"
                )
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Staged inside the home itself: the same filesystem as its files, even when the
        # home is a mount point or a link to another disk, so every move below is a rename.
        staging = Path(tempfile.mkdtemp(prefix=".hermes-restore-", dir=home))
        aside = Path(tempfile.mkdtemp(prefix=".hermes-replaced-", dir=home))
        try:
            _unpack(archive, staging, report)
            if not home_is_empty(home, ignore={staging.name, aside.name}):
                saved = home.resolve().parent / f"{home.name}-before-restore-{stamp}.zip"
                write_backup(home, saved, include_secrets=True, version=version)
                report.saved_first = saved
            _swap(home, staging, aside)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(aside, ignore_errors=True)
    return report
