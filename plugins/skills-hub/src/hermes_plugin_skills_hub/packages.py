"""What a hub gives: listings (a search hit) and packages (a skill's files, fetched), and
the content hash that pins an install."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = ["HubError", "Listing", "Package", "Unreachable", "content_hash", "folder_files"]

TRUST_LEVELS = ("official", "trusted", "community")


class HubError(RuntimeError):
    """One line to act on; nothing was installed or changed."""


class Unreachable(HubError):
    """The hub did not answer (offline, DNS, a timeout): a cached answer may serve."""


@dataclass(frozen=True)
class Listing:
    identifier: str
    """What ``hermes skills install`` takes (``github:openai/skills/skills/.curated/pdf``)."""
    name: str
    description: str
    source: str
    trust: str = "community"
    extra: Mapping[str, str] = field(default_factory=dict)
    """More to show: category, installs, version."""

    def as_dict(self) -> dict[str, object]:
        return {
            "identifier": self.identifier,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "trust": self.trust,
            "extra": dict(self.extra),
        }

    @classmethod
    def of(cls, data: Mapping[str, object]) -> Listing:
        extra = data.get("extra")
        return cls(
            identifier=str(data["identifier"]),
            name=str(data["name"]),
            description=str(data.get("description") or ""),
            source=str(data.get("source") or ""),
            trust=str(data.get("trust") or "community"),
            extra={str(k): str(v) for k, v in extra.items()} if isinstance(extra, Mapping) else {},
        )


@dataclass
class Package:
    """A skill as fetched, before it is written anywhere."""

    identifier: str
    source: str
    trust: str
    files: dict[str, bytes]
    """Relative POSIX path -> content; SKILL.md among them."""
    revision: str = ""
    """The source's version of it: a commit, a release, a digest."""
    source_url: str = ""
    name_hint: str = ""
    """A name to use when SKILL.md gives none (the folder it came from)."""


def safe_path(relative: str) -> str:
    """``relative`` as a clean path inside a skill, or HubError."""
    path = PurePosixPath(relative.replace("\\", "/"))
    if not path.parts or path.is_absolute() or ".." in path.parts or ":" in path.parts[0]:
        raise HubError(f"refused: the file {relative!r} would land outside the skill's folder")
    return path.as_posix()


def check_layout(files: Mapping[str, bytes]) -> None:
    """HubError when one path is a file and a folder at once (``a`` and ``a/b``)."""
    folders = {str(PurePosixPath(p).parent) for p in files}
    clash = sorted(folders & set(files))
    if clash:
        raise HubError(f"refused: {clash[0]!r} is both a file and a folder in the package")


def content_hash(files: Mapping[str, bytes]) -> str:
    """``sha256:`` over every file's path and content, in path order: the same files give
    the same hash wherever they came from."""
    digest = hashlib.sha256()
    for relative in sorted(files):
        digest.update(relative.encode() + b"\0" + hashlib.sha256(files[relative]).digest())
    return "sha256:" + digest.hexdigest()


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` (symlinks are not followed), by relative path."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }
