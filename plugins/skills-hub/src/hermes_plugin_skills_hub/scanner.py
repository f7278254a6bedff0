"""The hub's scan of a skill before it is installed (and again by ``hermes skills audit``).

Per file: prose is scanned for prompt injection, requests to send secrets and invisible
characters (:mod:`hermes_commons.scan`); scripts, in addition, for commands that destroy
data or open the machine. Per skill: hidden files and folders (a dot file is not shown by
``ls`` nor by most file views, and nothing in a skill needs one), binaries (a skill is
instructions and small scripts; an executable cannot be read for what it does), and sizes.

Verdicts: ``blocked`` findings (injection, exfiltration, invisible text, hidden files) are
never installed, whatever the flags; ``caution`` findings (dangerous commands, binaries,
sizes) are installed only with ``--force``. A scan catches mistakes and crude attacks, not
a determined adversary: the operating system is the real boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from hermes_commons.scan import scan_script, scan_text

__all__ = ["Finding", "Scan", "scan_files"]

SCANNER = "hermes-hub-scan-1"
SCRIPT_SUFFIXES = {".sh", ".bash", ".zsh", ".py", ".js", ".ts", ".rb", ".pl", ".ps1", ".php"}
BINARY_SUFFIXES = {
    ".exe",
    ".dll",
    ".so",
    ".dylib",
    ".bin",
    ".dat",
    ".com",
    ".msi",
    ".dmg",
    ".deb",
    ".rpm",
    ".jar",
    ".class",
    ".pyc",
    ".o",
    ".a",
}
MEDIA_SUFFIXES = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
    ".svg",
    ".ico",
    ".pdf",
    ".ttf",
    ".woff",
    ".woff2",
}
BLOCKING = {"injection", "exfiltration", "invisible", "hidden"}


@dataclass(frozen=True)
class Finding:
    file: str
    kind: str
    detail: str

    @property
    def blocking(self) -> bool:
        return self.kind in BLOCKING

    def __str__(self) -> str:
        return f"{self.file}: {self.kind}: {self.detail}"


@dataclass(frozen=True)
class Scan:
    findings: tuple[Finding, ...]

    @property
    def verdict(self) -> str:
        if any(f.blocking for f in self.findings):
            return "blocked"
        return "caution" if self.findings else "safe"

    def line(self, name: str) -> str:
        """One line for the skill: the verdict and the first finding."""
        if not self.findings:
            return f"{name}: safe"
        first = self.findings[0]
        more = (
            f" (and {len(self.findings) - 1} more: hermes skills inspect shows all)"
            if len(self.findings) > 1
            else ""
        )
        return f"{name}: {self.verdict}: {first}{more}"


_MAGIC = {
    ".png": (b"\x89PNG",),
    ".jpg": (b"\xff\xd8",),
    ".jpeg": (b"\xff\xd8",),
    ".gif": (b"GIF8",),
    ".webp": (b"RIFF",),
    ".ico": (b"\x00\x00\x01\x00",),
    ".pdf": (b"%PDF",),
    ".ttf": (b"\x00\x01\x00\x00", b"true"),
    ".woff": (b"wOFF",),
    ".woff2": (b"wOF2",),
}


def _looks_like(suffix: str, content: bytes) -> bool:
    """Whether a media file starts as its kind does (text named .png is not an image)."""
    return content.startswith(_MAGIC.get(suffix, (b"",)))


def scan_files(files: Mapping[str, bytes], max_file: int, max_total: int, max_files: int) -> Scan:
    found: list[Finding] = []
    if len(files) > max_files:
        found.append(Finding(".", "size", f"{len(files)} files; at most {max_files}"))
    total = sum(len(content) for content in files.values())
    if total > max_total:
        found.append(Finding(".", "size", f"{total} bytes in all; at most {max_total}"))
    for relative in sorted(files, key=lambda p: (p != "SKILL.md", p)):
        content = files[relative]
        path = PurePosixPath(relative)
        if any(part.startswith(".") for part in path.parts):
            found.append(
                Finding(
                    relative, "hidden", "a hidden file: nothing in a skill needs one; remove it"
                )
            )
        suffix = path.suffix.lower()
        if len(content) > max_file:
            found.append(Finding(relative, "size", f"{len(content)} bytes; at most {max_file}"))
        if suffix in BINARY_SUFFIXES or content.startswith(
            (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe")
        ):
            found.append(
                Finding(relative, "binary", "an executable or compiled file cannot be reviewed")
            )
            continue
        runnable = path.parts[0] == "scripts" or content.startswith(b"#!")
        if suffix in MEDIA_SUFFIXES and suffix != ".svg" and not runnable:
            if not _looks_like(suffix, content):
                found.append(Finding(relative, "binary", f"not the {suffix} file its name says"))
            try:  # a real image never decodes as text; text behind a magic number is read
                hidden_text = content.decode("utf-8")
            except UnicodeDecodeError:
                continue
            found += [Finding(relative, f.kind, f.detail) for f in scan_text(hidden_text)]
            continue
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            if path.parts[0] != "assets" or runnable:
                found.append(Finding(relative, "binary", "not UTF-8 text outside assets/"))
            continue
        script = suffix in SCRIPT_SUFFIXES or runnable
        for finding in scan_script(text) if script else scan_text(text):
            found.append(Finding(relative, finding.kind, finding.detail))
    return Scan(tuple(found))
