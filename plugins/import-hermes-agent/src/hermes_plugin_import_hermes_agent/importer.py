"""Bring one hermes-agent home (and its profiles) into a Hermes home: the importer that
``hermes import hermes-agent`` runs.

The source is only read: its files are opened for reading, and its state.db is read from a
copy. Everything is written in the target, and only what the target lacks, so an import
run again brings only what is new. What belongs to no plugin (settings, secrets, persona,
approved users, sessions) is brought here; what a plugin keeps (memory entries, skills, cron
jobs) that plugin brings over itself, through ``ImportRequest.import_parts``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.sqlite_copy import readable_copy
from hermes_plugin_import_hermes_agent.config_map import ENV_RENAMES, MappedConfig, map_config
from hermes_plugin_import_hermes_agent.history import (
    HistoryStats,
    HistoryUnreadable,
    history_batches,
)
from hermes_plugin_import_hermes_agent.homefiles import (
    import_env,
    import_soul,
    read_text,
    source_env,
)
from hermes_plugin_import_hermes_agent.transcripts import read_transcripts, transcript_files
from hermes_sdk.archive import ArchivedSession, PairedUser, SessionArchive
from hermes_sdk.importing import (
    HomeImport,
    ImportedHome,
    ImportRefused,
    ImportRequest,
    ImportSection,
)

SOURCE_KIND = "hermes-agent"
"""What plugins are told the source is (``HomeImport.source_kind``)."""

BATCH = 200
"""Sessions written per transaction: a crash loses at most one batch, which the next run
brings again."""

HANDLED = frozenset(
    {
        "config.yaml",
        ".env",
        "SOUL.md",
        "state.db",
        "profiles",
        "platforms",
        "pairing",
        "active_profile",
    }
)
WHY_NOT = {
    "logs": "hermes-agent's logs; Hermes writes its own in logs/",
    "auth.json": "OAuth sign-ins and pooled keys: sign in again, or put the keys in .env",
    "sessions": "hermes-agent's per-session logs and gateway index: what they hold and "
    "state.db does not came over (see sessions)",
    "state.db-wal": "part of state.db (read with it)",
    "state.db-shm": "part of state.db",
    "hooks": "hermes-agent's shell hooks: Hermes runs plugins, not hook scripts",
    "skins": "hermes-agent's terminal themes",
    "checkpoints": "hermes-agent's file checkpoints",
    "gateway.pid": "hermes-agent's running gateway, if any",
    "gateway_state.json": "hermes-agent's gateway status",
}
PLUGIN_PARTS = {
    "memories": ("memory entries", "memory-builtin"),
    "skills": ("skills", "skills"),
    "cron": ("cron jobs", "cron"),
    "kanban.db": ("kanban tasks", "kanban"),
    "kanban": ("kanban tasks", "kanban"),
    "plugins": ("plugin folders", "compat-hermes-agent"),
}
"""Parts of a hermes-agent home that a plugin of ours brings over (hermes_import_home), and
what they hold: without that plugin, they are left, saying so."""
QUIET = ("cache", "audio_cache", "image_cache", "sandboxes", "plans", "workspace", "home")
"""Caches and scratch folders: left without a line each."""


class HermesAgentImporter:
    """The :class:`~hermes_sdk.importing.Importer` for ``hermes import hermes-agent``: a
    home, or one of hermes-agent's backup zips (unpacked once, into a private folder)."""

    def __init__(self) -> None:
        from hermes_plugin_import_hermes_agent.backup_zip import UnpackedZips

        self._zips = UnpackedZips()

    def _home(self, source: Path) -> Path:
        from hermes_plugin_import_hermes_agent.backup_zip import is_backup_zip

        return self._zips.home_of(source) if is_backup_zip(source) else source

    def detect(self, path: Path) -> bool:
        return looks_like_hermes_agent(path)

    def recognize(self, home: Path) -> str | None:
        from hermes_plugin_import_hermes_agent.recognize import hermes_agent_evidence

        return hermes_agent_evidence(home)

    def check(self, source: Path, target: Path) -> None:
        home = self._home(source)
        try:
            check_source(home, target)
        except ImportRefused as exc:
            if home == source:
                raise
            # About the zip, not the folder it was unpacked into.
            raise ImportRefused(str(exc).replace(str(home), f"the zip {source}")) from None

    def run(self, request: ImportRequest) -> list[ImportedHome]:
        home = self._home(request.source)
        homes = import_all(home, request.target, request)
        if home != request.source:  # say the zip, not the folder it was unpacked into
            for imported in homes:
                inside = Path(imported.source).relative_to(home).as_posix()
                where = "" if inside == "." else f" ({inside})"
                imported.source = f"{request.source}{where}"
        return homes


def looks_like_hermes_agent(path: Path) -> bool:
    """A folder with hermes-agent's files, and not a Hermes home."""
    if not any((path / name).exists() for name in ("state.db", "config.yaml", "memories")):
        return False
    return not ((path / "state.db").exists() and _ours(path / "state.db"))


def check_source(source: Path, target: Path) -> None:
    """Refuse a source that is missing, is not hermes-agent's, or that the import would
    write into (the target is it, or inside it)."""
    if not source.is_dir():
        raise ImportRefused(
            f"{source} does not exist or is not a folder: give the path of the "
            "hermes-agent home (by default ~/.hermes)"
        )
    if not any((source / name).exists() for name in ("state.db", "config.yaml", "memories")):
        raise ImportRefused(
            f"{source} has no state.db, config.yaml or memories/: it is not a hermes-agent home"
        )
    if (source / "state.db").exists() and _ours(source / "state.db"):
        raise ImportRefused(f"{source} is a Hermes home already, not a hermes-agent one")
    resolved_source, resolved_target = source.resolve(), target.resolve()
    if resolved_target == resolved_source or resolved_source in resolved_target.parents:
        raise ImportRefused(
            f"{target} is the hermes-agent home itself (or inside it), and the import never "
            f"changes it: run it with HERMES_HOME set to a new folder, for example "
            f"`HERMES_HOME={source}-new hermes import hermes-agent {source}`"
        )


def _ours(state_db: Path) -> bool:
    """Whether ``state_db`` is Hermes's own store (its leases, or the turn leases of a
    Hermes before them, and no table of hermes-agent's schema bookkeeping)."""
    from hermes_plugin_import_hermes_agent.recognize import read_schema

    schema = read_schema(state_db)
    if schema is None or "schema_version" in schema[1]:
        return False
    return bool(schema[1] & {"leases_held", "turn_leases"})


def import_home(
    source: Path, target: Path, options: ImportRequest, profile: str | None = None
) -> ImportedHome:
    report = ImportedHome(str(source), str(target), profile)
    running = running_gateway(source)
    if running is not None:
        report.section(ImportSection("hermes-agent")).note(
            f"its gateway is running (pid {running}): what it saves after this copy comes "
            "over with the next import; stop it first for a final one"
        )
    their_env = source_env(source)
    mapped, settings = _config(source, target, their_env, options, report)
    report.section(
        import_env(
            target, their_env, mapped.secrets, mapped.env_settings, ENV_RENAMES, options.dry_run
        )
    )
    report.section(import_soul(source, target, options.dry_run))
    parts = options.import_parts(
        HomeImport(
            source_kind=SOURCE_KIND,
            source=str(source),
            target=str(target),
            config=settings,
            dry_run=options.dry_run,
            include_sign_ins=options.include_sign_ins,
        )
    )
    for part in parts:
        report.section(part)
    report.section(_pairing(source, target, options))
    report.section(_sessions(source, target, options))
    report.section(_other_files(source, {name for part in parts for name in part.reads}))
    return report


def running_gateway(source: Path) -> int | None:
    """The pid in hermes-agent's gateway.pid, if that process is alive."""
    found = re.search(r"\d+", read_text(source / "gateway.pid") or "")
    if found is None:
        return None
    pid = int(found[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid  # alive, another user's
    return pid


# --- config.yaml ------------------------------------------------------------------------


def _config(
    source: Path,
    target: Path,
    env: Mapping[str, str],
    options: ImportRequest,
    report: ImportedHome,
) -> tuple[MappedConfig, dict[str, Any]]:
    """The mapping, and the target's settings with it (what this home will run with)."""
    section = report.section(ImportSection("settings (config.yaml)"))
    text = read_text(source / "config.yaml")
    data: Any = {}
    if text is not None:
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            section.left("config.yaml", f"not valid YAML{where}: nothing read from it")
            data = {}
        if not isinstance(data, dict):
            section.left("config.yaml", "not a mapping of keys: nothing read from it")
            data = {}
    folders = source / "plugins"
    found = [p.name for p in folders.iterdir() if p.is_dir()] if folders.is_dir() else []
    mapped = map_config(data, env, found)
    existing = _target_config(target)
    written, kept = _merge(existing, mapped.config)
    for theirs, ours in mapped.mapped:
        if not ours.startswith(".env "):
            section.add(f"{theirs} -> {ours}")
    for key in kept:
        section.skip(key, "this home sets it already (kept as it is)")
    for key, why in mapped.left:
        section.left(key, why)
    if written != existing and not options.dry_run:
        header = (
            f"# Brought over from the hermes-agent home {source} by `hermes import "
            f"hermes-agent` on {time.strftime('%Y-%m-%d')}.\n"
        )
        _add_to_config(target / "config.yaml", mapped.config, header)
    return mapped, written


def _add_to_config(path: Path, additions: dict[str, Any], header: str) -> None:
    """Add the keys the file lacks, editing it round trip (ruamel.yaml), so its comments,
    order and quoting stay as they were; a new file starts with ``header``."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line
    text = read_text(path) or ""
    data = yaml.load(text) if text.strip() else None
    above = header
    if not isinstance(data, dict):  # no file, or comments only: they stay on top
        above = text.rstrip("\n") + "\n" if text.strip() else header
        data = CommentedMap()
    elif text.strip():
        above = ""
    _add_missing(data, additions)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    atomic_write_text(path, above + buffer.getvalue())


def _add_missing(ours: Any, theirs: Mapping[str, Any]) -> None:
    for key, value in theirs.items():
        if key not in ours:
            ours[key] = value
        elif isinstance(ours[key], dict) and isinstance(value, Mapping):
            _add_missing(ours[key], value)


def _target_config(target: Path) -> dict[str, Any]:
    import yaml

    text = read_text(target / "config.yaml")
    try:
        data = yaml.safe_load(text or "") or {}
    except yaml.YAMLError:
        raise ImportRefused(
            f"{target / 'config.yaml'} is not valid YAML: fix it (hermes config validate), then "
            "import again"
        ) from None
    return data if isinstance(data, dict) else {}


def _merge(
    ours: dict[str, Any], theirs: dict[str, Any], prefix: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """``theirs`` under ``ours``: what this home already sets wins; returns the result and
    the dotted keys where it did."""
    merged = dict(ours)
    kept: list[str] = []
    for key, value in theirs.items():
        path = f"{prefix}{key}"
        if key not in merged:
            merged[key] = value
        elif isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key], deeper = _merge(merged[key], value, f"{path}.")
            kept += deeper
        elif merged[key] != value:
            kept.append(path)
    return merged, kept


# --- pairing and sessions ---------------------------------------------------------------


def _pairing(source: Path, target: Path, options: ImportRequest) -> ImportSection:
    section = ImportSection("approved chat users (pairing)")
    users: dict[tuple[str, str], PairedUser] = {}
    for folder in (source / "pairing", source / "platforms" / "pairing"):
        for path in sorted(folder.glob("*-approved.json")) if folder.is_dir() else []:
            platform = path.name.removesuffix("-approved.json")
            try:
                approved = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, OSError):
                section.left(str(path.relative_to(source)), "not readable JSON")
                continue
            for user_id, found in approved.items() if isinstance(approved, dict) else []:
                info = found if isinstance(found, dict) else {}
                users[(platform, str(user_id))] = PairedUser(
                    platform,
                    str(user_id),
                    str(info.get("user_name") or ""),
                    float(info.get("approved_at") or time.time()),
                )
        for path in sorted(folder.glob("*-pending.json")) if folder.is_dir() else []:
            if read_text(path) not in (None, "{}", "{}\n"):
                section.left(
                    str(path.relative_to(source)),
                    "codes waiting for approval are stored hashed: ask again",
                )
    if not users:
        return section
    for platform, user_id in sorted(users):
        section.add(f"{platform}:{user_id} ({users[(platform, user_id)].user_name or 'no name'})")
    if not options.dry_run:
        with options.open_archive(str(target)) as archive:
            section.count = archive.add_paired(list(users.values()))
        if section.count < len(users):
            section.skip(f"{len(users) - section.count} of them", "approved here already")
    return section


@dataclass
class _Tally:
    new: int = 0
    already: int = 0
    messages: int = 0
    calls: int = 0
    children: int = 0
    from_logs: int = 0


def _store(
    batch: list[ArchivedSession], archive: SessionArchive | None, dry_run: bool, tally: _Tally
) -> int:
    """Write the sessions of ``batch`` the target lacks; returns how many were new."""
    stored = archive.stored(s.id for s in batch) if archive is not None else set()
    new = [session for session in batch if session.id not in stored]
    tally.already += len(batch) - len(new)
    added = archive.add(new) if new and not dry_run and archive is not None else len(new)
    tally.new += added
    tally.messages += sum(len(s.messages) for s in new)
    tally.calls += sum(len(m.tool_calls) for s in new for m in s.messages)
    tally.children += sum(1 for s in new if s.parent_session_id)
    return added


def _sessions(source: Path, target: Path, options: ImportRequest) -> ImportSection:
    section = ImportSection("sessions")
    state_db = source / "state.db"
    logs = transcript_files(source)
    if not state_db.exists() and not logs:
        return section
    stats = HistoryStats()
    tally = _Tally()
    in_db: set[str] = set()
    unreadable: list[str] = []
    with _archive(target, options) as archive:
        if state_db.exists():
            try:
                with readable_copy(state_db) as connection:
                    for batch in history_batches(connection, stats, BATCH):
                        in_db.update(session.id for session in batch)
                        _store(batch, archive, options.dry_run, tally)
            except HistoryUnreadable as exc:
                section.left("state.db", f"{exc}; the sessions in sessions/*.json come instead")
        pending: list[ArchivedSession] = []
        for session in read_transcripts(logs, in_db, stats, unreadable):
            pending.append(session)
            if len(pending) == BATCH:
                tally.from_logs += _store(pending, archive, options.dry_run, tally)
                pending = []
        if pending:
            tally.from_logs += _store(pending, archive, options.dry_run, tally)
    section.count = tally.new
    if tally.already:
        section.skip(f"{tally.already} sessions", "imported before")
    version = f" (schema version {stats.schema_version})" if stats.schema_version else ""
    section.note(
        f"{tally.messages} messages with {tally.calls} tool calls; {tally.children} linked to a "
        f"parent session{version}"
    )
    if tally.from_logs:
        section.note(f"{tally.from_logs} of them only in hermes-agent's sessions/*.json logs")
    for name in unreadable:
        section.left(f"sessions/{name}", "not a session log hermes-agent wrote")
    section.note(
        "their system prompts are not kept: a resumed session gets one built from "
        "this home (memory, skills) at its first turn"
    )
    if stats.rewound:
        section.left(
            f"{stats.rewound} messages", "taken back with /rewind or /undo in hermes-agent"
        )
    for role, count in sorted(stats.odd_roles.items()):
        section.left(f"{count} messages of role {role!r}", "not a role of a conversation here")
    if stats.images:
        section.left(
            f"{stats.images} images", "the text around them came over, marked where each was"
        )
    if stats.orphan_parents:
        section.note(
            f"{stats.orphan_parents} sessions named a parent that is not in state.db; "
            "they came over without the link"
        )
    return section


@contextlib.contextmanager
def _archive(target: Path, options: ImportRequest) -> Iterator[SessionArchive | None]:
    """The target's store; None in a dry run on a home that has none yet (nothing is
    created to answer what it holds: nothing)."""
    if options.dry_run and not (target / "state.db").exists():
        yield None
        return
    with options.open_archive(str(target)) as archive:
        yield archive


def _other_files(source: Path, brought: set[str]) -> ImportSection:
    """What nothing brought over: ``brought`` is what the plugins' parts covered."""
    section = ImportSection("other files")
    for entry in sorted(source.iterdir()):
        name = entry.name
        if name in HANDLED or name in QUIET or name.endswith(".lock") or name.startswith("."):
            continue
        if name in brought:
            continue
        if name in PLUGIN_PARTS:
            what, plugin = PLUGIN_PARTS[name]
            section.left(
                name + ("/" if entry.is_dir() else ""),
                f"its {what}: no installed plugin brings them over; install the one that "
                f"keeps them (hermes plugins install {plugin}), then import again",
            )
            continue
        section.left(
            name + ("/" if entry.is_dir() else ""),
            WHY_NOT.get(name, "hermes-agent's own; nothing in Hermes uses it"),
        )
    return section


# --- profiles ---------------------------------------------------------------------------


def profiles_of(source: Path) -> list[Path]:
    folder = source / "profiles"
    if not folder.is_dir():
        return []
    return [p for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.startswith(".")]


def import_all(source: Path, target: Path, options: ImportRequest) -> list[ImportedHome]:
    """The home, then each profile into the target's profiles/ (the profiles of the base
    home the target is in, when the target is itself a profile)."""
    reports = [import_home(source, target, options)]
    base = target.parent.parent if target.parent.name == "profiles" else target
    for folder in profiles_of(source):
        reports.append(import_home(folder, base / "profiles" / folder.name, options, folder.name))
    active = (read_text(source / "active_profile") or "").strip()
    if active and active != "default" and not (base / "active_profile").exists():
        reports[0].section(ImportSection("default profile")).add(active)
        if not options.dry_run:
            atomic_write_text(base / "active_profile", active + "\n")
    return reports
