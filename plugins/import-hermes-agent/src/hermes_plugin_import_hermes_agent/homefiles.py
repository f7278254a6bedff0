"""The files of a hermes-agent home that belong to no plugin and come over as files: .env
and SOUL.md. (Memory entries, skills and cron jobs are brought over by the plugins that keep
them, through ``hermes_import_home``.) Each function reads the source, decides, and writes
only in the target (never when ``dry_run``); each returns what it did for the report."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hermes_sdk.importing import ImportSection

DEFAULT_SOUL = "You are Hermes Agent, an intelligent AI assistant created by Nous Research."
"""How hermes-agent's own SOUL.md begins: a file it wrote itself, not the user's persona."""


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` by rename, synced first, so a crash leaves the old file
    or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class NotText(OSError):
    """A file that should hold UTF-8 text does not: one line naming it."""


def read_text(path: Path) -> str | None:
    """The file's text; None if it does not exist. Raises :class:`NotText` (an OSError,
    reported as one line) for bytes that are not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise NotText(
            f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8, then import again"
        ) from None


# --- .env ------------------------------------------------------------------------------


def parse_env(text: str) -> dict[str, str]:
    """KEY=VALUE lines (``export`` and quotes allowed), as hermes-agent's .env holds them."""
    found: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()) and value:
            found[key.strip()] = value
    return found


def import_env(
    target: Path,
    source_env: Mapping[str, str],
    moved_secrets: Mapping[str, str],
    settings: set[str],
    renames: Mapping[str, str],
    dry_run: bool,
) -> ImportSection:
    """Secrets into the target's .env (kept at 0600): the source's, minus the settings
    that moved into config.yaml, plus keys that were written inline in its config. A name
    the target already has keeps the target's value."""
    section = ImportSection("secrets (.env)")
    path = target / ".env"
    existing = parse_env(read_text(path) or "")
    wanted: dict[str, str] = {}
    for name, value in {**source_env, **moved_secrets}.items():
        if name in settings:
            section.left(name, "a setting, not a secret: it is in config.yaml now")
            continue
        ours = renames.get(name, name)
        if ours in existing:
            section.skip(ours, "already in this home's .env (kept as it is)")
            continue
        wanted[ours] = value
        section.add(ours if ours == name else f"{name} as {ours}")
    if wanted and not dry_run:
        lines = [line for line in (read_text(path) or "").splitlines() if line.strip()]
        lines += [f"{name}={_quoted(value)}" for name, value in wanted.items()]
        write_atomically(path, "\n".join(lines) + "\n", mode=0o600)
    return section


def _quoted(value: str) -> str:
    """A value as Hermes's .env reader reads it back: double quotes, backslash escapes."""
    if value and not any(ch in value for ch in " #'\"\\\n\r\t"):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


# --- SOUL.md ---------------------------------------------------------------------------


def import_soul(source: Path, target: Path, dry_run: bool) -> ImportSection:
    section = ImportSection("persona (SOUL.md)")
    text = read_text(source / "SOUL.md")
    if text is None or not _own_words(text):
        if text is not None:
            section.left("SOUL.md", "hermes-agent's default persona, not one you wrote")
        return section
    if (target / "SOUL.md").exists():
        section.skip("SOUL.md", "this home has its own (kept as it is)")
        return section
    section.add("SOUL.md")
    if not dry_run:
        write_atomically(target / "SOUL.md", text)
    return section


def _own_words(text: str) -> bool:
    """Whether SOUL.md holds a persona the user wrote (not a template hermes-agent seeded)."""
    stripped = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    lines = [line for line in stripped.splitlines() if line.strip() and not line.startswith("#")]
    return bool(lines) and not text.strip().startswith(DEFAULT_SOUL)
