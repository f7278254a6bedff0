"""What a wheel declares, read from the archive without installing or importing it."""

from __future__ import annotations

import configparser
import hashlib
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path

PLUGIN_GROUP = "hermes.plugins"
"""The entry points naming each plugin (the contract's group, as the SDK documents it)."""
MANIFEST_GROUP = "hermes.provides"
"""The entry points declaring what a plugin provides, as ``KIND.NAME``."""


class ArtifactError(Exception):
    """A file that should be a plugin's wheel is not one; the message says which and why."""


@dataclass(frozen=True)
class WheelInfo:
    """A built distribution's name, version, dependencies and Hermes entry points."""

    path: Path
    distribution: str
    version: str
    summary: str
    requires: tuple[str, ...]
    plugins: tuple[str, ...]  # names in the hermes.plugins group
    provides: tuple[str, ...] = field(default=())  # keys in the hermes.provides group

    def sha256(self) -> str:
        return file_sha256(self.path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_wheel(path: Path) -> WheelInfo:
    """Parse ``path``'s METADATA and entry_points.txt; ArtifactError if it is not a wheel."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            info_dir = next(
                (n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), None
            )
            if info_dir is None:
                raise ArtifactError(f"{path}: not a wheel (no .dist-info/METADATA inside)")
            metadata = archive.read(f"{info_dir}/METADATA").decode("utf-8")
            entry_points_name = f"{info_dir}/entry_points.txt"
            entry_points = (
                archive.read(entry_points_name).decode("utf-8")
                if entry_points_name in names
                else ""
            )
    except (OSError, zipfile.BadZipFile) as exc:
        raise ArtifactError(f"{path}: not a readable wheel ({exc})") from None
    headers = HeaderParser().parsestr(metadata)
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    try:
        parser.read_string(entry_points)
    except configparser.Error as exc:
        raise ArtifactError(f"{path}: entry_points.txt does not parse ({exc})") from None

    def group(name: str) -> tuple[str, ...]:
        return tuple(sorted(parser[name])) if parser.has_section(name) else ()

    return WheelInfo(
        path=path,
        distribution=headers.get("Name", "?"),
        version=headers.get("Version", "?"),
        summary=headers.get("Summary", "") or "",
        requires=tuple(headers.get_all("Requires-Dist") or ()),
        plugins=group(PLUGIN_GROUP),
        provides=group(MANIFEST_GROUP),
    )
