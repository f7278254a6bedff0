"""The media layer: files people send to Hermes, and files Hermes sends back.

Every front-end turns what it receives (a CLI ``--image``, a Telegram photo, an API
``image_url`` part, an editor's image block) into an :class:`Attachment` through one
:class:`MediaCache`, so every file is judged the same way:

- its MIME type is sniffed from its content, never trusted from its name or the sender;
- a file whose name or declared type says one kind while its content is another (an
  executable named ``cat.png``) is refused, in one line;
- each kind has a size cap (``media.max_mb``), checked before a byte is downloaded where the
  size is known;
- it is kept under ``HERMES_HOME/cache/media``, named by its content's hash, in a cache that
  is bounded in size and age and cleaned as it fills.

An attachment also carries a text fallback (:attr:`Attachment.text`): what a model that cannot
take the file reads instead (a transcript, a document's text, an image's description). The
turn engine fills it when the turn begins and stores it with the message, so what was said
survives the file's cleaning::

    cache = MediaCache.of_home(home, config)
    try:
        photo = cache.ingest(data, name="cat.jpg", declared="image/jpeg")
    except MediaRefused as exc:
        reply(str(exc))  # "cat.jpg is refused: ..."
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

__all__ = [
    "Attachment",
    "AttachmentKind",
    "MediaCache",
    "MediaLimits",
    "MediaRefused",
    "describe_size",
    "kind_of_mime",
    "sniff",
]

AttachmentKind = Literal["image", "audio", "video", "document", "file"]
"""``image``: a model that sees takes it as it is. ``audio``: transcribed. ``document``: its
text is read (PDF, DOCX, CSV, text and code). ``video`` and ``file``: named, not read."""

_KINDS: tuple[AttachmentKind, ...] = get_args(AttachmentKind)
_A_KIND: dict[AttachmentKind, str] = {
    "image": "an image",
    "audio": "audio",
    "video": "a video",
    "document": "a document",
    "file": "a file",
}

_EXECUTABLE_MIMES = frozenset(
    {
        "application/x-executable",
        "application/x-elf",
        "application/x-msdownload",
        "application/x-mach-binary",
        "application/x-sharedlib",
        "application/vnd.microsoft.portable-executable",
    }
)
_DOCUMENT_MIMES = frozenset(
    {
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/json",
        "application/xml",
    }
)
# Office formats are zip files: a sniffer that cannot look inside says "zip".
_ZIP_DOCUMENTS = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
_TEXT_NAMES = {
    ".csv": "text/csv",
    ".md": "text/markdown",
    ".json": "application/json",
    ".svg": "image/svg+xml",
}


class MediaRefused(ValueError):
    """A file Hermes will not take; the message is one line that says why and what to do."""


def describe_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.0f} KB"
    return f"{size} bytes"


def kind_of_mime(mime: str) -> AttachmentKind:
    """The kind a MIME type stands for (``image/png``: image)."""
    if mime.endswith(("+json", "+xml")):  # SVG is text a model reads, not a picture it sees
        return "document"
    top = mime.partition("/")[0]
    if top in ("image", "audio", "video"):
        return top  # type: ignore[return-value]  # one of the three literals, just checked
    if top == "text" or mime in _DOCUMENT_MIMES:
        return "document"
    return "file"


def _looks_like_text(head: bytes) -> bool:
    if not head or b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut by the sample's end
    return True


def sniff(data: bytes, name: str = "") -> str:
    """The MIME type of ``data`` judged from its content (``filetype``'s signatures, then a
    check for text); the name only refines text (``.csv``) and zip-based office formats."""
    # Imported here: its signature tables load on the first file, not at start-up.
    import filetype  # type: ignore[import-untyped]  # the package ships no type hints

    head = data[:8192]
    guessed = filetype.guess_mime(head)
    suffix = Path(name).suffix.lower()
    if guessed == "application/zip" and suffix in _ZIP_DOCUMENTS:
        return _ZIP_DOCUMENTS[suffix]
    if guessed:
        return str(guessed)
    if _looks_like_text(head):
        return _TEXT_NAMES.get(suffix, "text/plain")
    return "application/octet-stream"


def _claimed_kind(name: str, declared: str | None) -> tuple[AttachmentKind, str] | None:
    """The kind the name's extension or the sender's declared type claims, with the claim."""
    if declared and declared not in ("application/octet-stream", "binary/octet-stream"):
        return kind_of_mime(declared), declared
    guessed, _ = mimetypes.guess_type(name) if name else (None, None)
    if guessed:
        return kind_of_mime(guessed), Path(name).suffix.lower() or guessed
    return None


def _compatible(claimed: AttachmentKind, actual: AttachmentKind) -> bool:
    if claimed in (actual, "file"):
        return True
    # The same containers hold sound or pictures (.m4a is an mp4, .ogg may be sniffed video).
    return {claimed, actual} <= {"audio", "video"}


def _what(mime: str) -> str:
    if mime in _EXECUTABLE_MIMES:
        return f"an executable program ({mime})"
    return mime


@dataclass(frozen=True, slots=True)
class MediaLimits:
    """Size caps per kind and the cache's bounds (``media:`` in config.yaml)."""

    max_bytes: Mapping[str, int] = field(
        default_factory=lambda: {
            "image": 20_000_000,
            "audio": 25_000_000,  # what OpenAI-compatible transcription endpoints take
            "video": 50_000_000,
            "document": 20_000_000,
            "file": 20_000_000,
        }
    )
    cache_bytes: int = 1_000_000_000
    """The cache's total size; the oldest files go first when it is passed."""
    keep_seconds: float = 30 * 86_400
    """Files unused for this long are removed (their text fallback stays in the history)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> MediaLimits:
        """From config.yaml as loaded (its ``media:`` section; defaults where absent)."""
        section = config.get("media")
        limits = cls()
        if not isinstance(section, Mapping):
            return limits
        caps = dict(limits.max_bytes)
        configured = section.get("max_mb")
        if isinstance(configured, Mapping):
            for kind, megabytes in configured.items():
                if kind in caps and isinstance(megabytes, int | float) and megabytes > 0:
                    caps[kind] = int(megabytes * 1_000_000)
        cache_mb = section.get("cache_mb")
        keep_days = section.get("keep_days")
        return replace(
            limits,
            max_bytes=caps,
            cache_bytes=int(cache_mb * 1_000_000)
            if isinstance(cache_mb, int | float) and cache_mb > 0
            else limits.cache_bytes,
            keep_seconds=float(keep_days) * 86_400
            if isinstance(keep_days, int | float) and keep_days > 0
            else limits.keep_seconds,
        )

    def cap(self, kind: AttachmentKind) -> int:
        return self.max_bytes.get(kind, self.max_bytes.get("file", 20_000_000))


@dataclass(frozen=True, slots=True, kw_only=True)
class Attachment:
    """A file in a message. Stored with the message (:meth:`as_dict`)."""

    kind: AttachmentKind
    mime: str
    """Sniffed from the content."""
    size: int
    path: str
    """The file, under ``HERMES_HOME/cache/media`` (it may be cleaned later)."""
    name: str = ""
    """The name it was sent with, or one made from its type ("image.jpg")."""
    text: str = ""
    """What a model that cannot take the file reads instead; empty until it is read."""
    note: str = ""
    """How the text came to be ("transcribed by openai"), shown beside it."""

    def as_dict(self) -> dict[str, Any]:
        found = {
            "kind": self.kind,
            "mime": self.mime,
            "size": self.size,
            "path": self.path,
            "name": self.name,
        }
        if self.text:
            found["text"] = self.text
        if self.note:
            found["note"] = self.note
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attachment:
        kind = str(data.get("kind", "file"))
        return cls(
            kind=kind if kind in _KINDS else "file",
            mime=str(data.get("mime", "application/octet-stream")),
            size=int(data.get("size", 0)),
            path=str(data.get("path", "")),
            name=str(data.get("name", "")),
            text=str(data.get("text", "")),
            note=str(data.get("note", "")),
        )

    def with_text(self, text: str, note: str = "") -> Attachment:
        return replace(self, text=text, note=note)

    def exists(self) -> bool:
        return bool(self.path) and os.path.isfile(self.path)

    def read_bytes(self) -> bytes:
        """The file's content. Raises MediaRefused when the cache no longer has it."""
        try:
            return Path(self.path).read_bytes()
        except OSError:
            raise MediaRefused(
                f"{self.label()} is no longer kept (media cache); send it again"
            ) from None

    def label(self) -> str:
        return self.name or f"a {self.kind}"

    def heading(self) -> str:
        """One line naming the file for a model: ``[image: cat.jpg, image/jpeg, 48 KB]``."""
        return f"[{self.kind}: {self.name or 'unnamed'}, {self.mime}, {describe_size(self.size)}]"

    def fallback(self) -> str:
        """The text a model reads for this file: its heading, and its text when known."""
        if not self.text:
            return self.heading()
        note = f" ({self.note})" if self.note else ""
        return f"{self.heading()}{note}\n{self.text}"


class MediaCache:
    """Files under ``HERMES_HOME/cache/media``, named by the SHA-256 of their content (the
    same file sent twice is kept once). Thread-safe; cleaning runs at most once a minute."""

    CLEAN_EVERY_SECONDS = 60.0
    _cleaned_at: ClassVar[dict[str, float]] = {}
    """When each folder was last cleaned: per folder, not per cache (caches are cheap to
    make, one per request), so a busy server scans its folder once a minute at most."""
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, folder: str | Path, limits: MediaLimits | None = None) -> None:
        self.folder = Path(folder)
        self.limits = limits or MediaLimits()

    @classmethod
    def of_home(cls, home: str | Path, config: Mapping[str, Any] | None = None) -> MediaCache:
        return cls(Path(home) / "cache" / "media", MediaLimits.from_config(config or {}))

    def check_size(self, kind: AttachmentKind, size: int, name: str = "") -> None:
        """Refuse a file over its kind's cap before it is downloaded (its size is known)."""
        cap = self.limits.cap(kind)
        if size > cap:
            label = name or f"the {kind}"
            raise MediaRefused(
                f"{label} is refused: {describe_size(size)} is over the {describe_size(cap)} "
                f"cap for {_A_KIND[kind]} (media.max_mb.{kind})"
            )

    def ingest(
        self,
        data: bytes,
        *,
        name: str = "",
        declared: str | None = None,
        expect: AttachmentKind | None = None,
    ) -> Attachment:
        """Keep ``data`` and describe it. ``declared`` is the type the sender gave, and
        ``expect`` the kind the front-end asked for (``--image``): a content that is not
        what either says is refused, as is one over its kind's cap or an empty one."""
        label = name or "the file"
        if not data:
            raise MediaRefused(f"{label} is refused: it is empty")
        mime = sniff(data, name)
        kind = kind_of_mime(mime)
        claimed = (expect, _A_KIND[expect]) if expect is not None else _claimed_kind(name, declared)
        if mime in _EXECUTABLE_MIMES:  # a program is never taken, whatever it says it is
            said = f" sent as {claimed[1]}" if claimed and claimed[0] != "file" else ""
            raise MediaRefused(f"{label} is refused: it is {_what(mime)}{said}")
        if claimed is not None and not _compatible(claimed[0], kind):
            raise MediaRefused(
                f"{label} is refused: it is sent as {claimed[1]} but its content is {_what(mime)}"
            )
        self.check_size(kind, len(data), name)
        digest = hashlib.sha256(data).hexdigest()[:32]
        suffix = mimetypes.guess_extension(mime) or ""
        path = self.folder / f"{digest}{suffix}"
        with self._lock:
            if path.exists():
                os.utime(path)  # used again: the newest to be cleaned
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
                temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
                temporary.write_bytes(data)
                os.replace(temporary, path)
        self.clean_soon()
        return Attachment(
            kind=kind,
            mime=mime,
            size=len(data),
            path=str(path),
            name=name or f"{kind}{suffix}",
        )

    def ingest_path(self, path: str | Path, *, expect: AttachmentKind | None = None) -> Attachment:
        """A file on this machine (a CLI ``--image``), checked and copied into the cache."""
        source = Path(path).expanduser()
        try:
            size = source.stat().st_size
        except FileNotFoundError:
            raise MediaRefused(f"{source} is refused: no such file") from None
        except OSError as exc:
            raise MediaRefused(f"{source} is refused: {exc.strerror or exc}") from None
        if not source.is_file():
            raise MediaRefused(f"{source} is refused: it is not a regular file")
        if expect is not None:
            self.check_size(expect, size, source.name)
        largest = max(self.limits.max_bytes.values())
        if size > largest:
            raise MediaRefused(
                f"{source.name} is refused: {describe_size(size)} is over every media cap "
                f"({describe_size(largest)})"
            )
        return self.ingest(source.read_bytes(), name=source.name, expect=expect)

    def clean_soon(self) -> None:
        now = time.monotonic()
        key = str(self.folder)
        with MediaCache._lock:
            due = now - MediaCache._cleaned_at.get(key, -1e9) >= self.CLEAN_EVERY_SECONDS
            if due:
                MediaCache._cleaned_at[key] = now
        if due:
            self.clean()

    def clean(self) -> int:
        """Remove files unused past ``keep_seconds``, then the oldest until the cache is
        within ``cache_bytes``. Returns how many were removed."""
        try:
            entries = [(entry.stat(), entry) for entry in self.folder.iterdir() if entry.is_file()]
        except FileNotFoundError:
            return 0
        entries.sort(key=lambda pair: pair[0].st_mtime)
        total = sum(stat.st_size for stat, _ in entries)
        cutoff = time.time() - self.limits.keep_seconds
        removed = 0
        for stat, entry in entries:
            if stat.st_mtime >= cutoff and total <= self.limits.cache_bytes:
                break
            try:
                entry.unlink()
            except OSError:
                continue
            total -= stat.st_size
            removed += 1
        return removed
