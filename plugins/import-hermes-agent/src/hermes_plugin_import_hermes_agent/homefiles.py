"""The files of a hermes-agent home that belong to no plugin and come over as files: .env
and SOUL.md. (Memory entries, skills and cron jobs are brought over by the plugins that keep
them, through ``hermes_import_home``.) Each function reads the source, decides, and writes
only in the target (never when ``dry_run``); each returns what it did for the report."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from hermes_commons.dotenv import parse_dotenv, read_dotenv, set_dotenv_values
from hermes_commons.files import atomic_write_text
from hermes_sdk.importing import ImportSection

DEFAULT_SOUL = "You are Hermes Agent, an intelligent AI assistant created by Nous Research."
"""How hermes-agent's own SOUL.md begins: a file it wrote itself, not the user's persona."""


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


def source_env(source: Path) -> dict[str, str]:
    """The secrets in the hermes-agent home's .env, read by the same strict rules as ours
    (hermes-agent's are python-dotenv's): a line that is not KEY=VALUE is one line naming
    file and line (DotenvError), never half a secret. Keys set empty hold nothing to bring."""
    path = source / ".env"
    values = parse_dotenv(path, read_text(path) or "")
    return {name: value for name, value in values.items() if value}


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
    existing = read_dotenv(path)
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
        set_dotenv_values(path, wanted)  # this home's lines kept, the new ones added, 0600
    return section


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
        atomic_write_text(target / "SOUL.md", text)
    return section


def _own_words(text: str) -> bool:
    """Whether SOUL.md holds a persona the user wrote (not a template hermes-agent seeded)."""
    stripped = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    lines = [line for line in stripped.splitlines() if line.strip() and not line.startswith("#")]
    return bool(lines) and not text.strip().startswith(DEFAULT_SOUL)
