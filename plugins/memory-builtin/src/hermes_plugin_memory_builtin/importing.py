"""``hermes import``: the entries of a hermes-agent home's memories/MEMORY.md and USER.md
(the same ``§``-separated format) come over into this home's, entries not bytes: each new
entry is added while it fits this home's budget (``memory.memory_chars``, ``user_chars``),
and the rest are kept beside the file (``MEMORY.md.not-imported``), so nothing is lost.
Written under the files' own locks, like every other memory write."""

from __future__ import annotations

from pathlib import Path

from hermes_plugin_memory_builtin.files import DELIMITER, change_entries, parse, read_entries
from hermes_plugin_memory_builtin.settings import memory_settings
from hermes_sdk.importing import HomeImport, ImportSection

SOURCE_KINDS = frozenset({"hermes-agent"})
"""Homes whose memories/ hold MEMORY.md and USER.md in this plugin's format."""
KIND = "memory entries"


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _source_entries(path: Path) -> list[str]:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except UnicodeDecodeError as exc:
        raise OSError(
            f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8, then import again"
        ) from None


def import_memories(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["memories"])
    settings = memory_settings(request.config)
    limits = (("MEMORY.md", settings.memory_chars), ("USER.md", settings.user_chars))
    for name, limit in limits:
        theirs = _source_entries(Path(request.source) / "memories" / name)
        if not theirs:
            continue
        path = Path(request.target) / "memories" / name
        spill = path.with_name(f"{name}.not-imported")

        def merge(
            current: dict[Path, list[str]],
            name: str = name,
            limit: int = limit,
            path: Path = path,
            spill: Path = spill,
            theirs: list[str] = theirs,
        ) -> dict[Path, list[str]]:
            kept, over = list(current[path]), list(current[spill])
            for entry in theirs:
                if entry in kept:
                    section.skip(f"{name}: {_short(entry)}", "already there")
                elif len(DELIMITER.join([*kept, entry])) <= limit:
                    kept.append(entry)
                    section.add(f"{name}: {_short(entry)}")
                else:
                    if entry not in over:
                        over.append(entry)
                    section.left(
                        f"{name}: {_short(entry)}",
                        f"over this home's limit of {limit} characters; kept in "
                        f"memories/{name}.not-imported",
                    )
            return {path: kept, spill: over}

        if request.dry_run:
            merge({path: read_entries(path), spill: read_entries(spill)})
        else:
            change_entries([path, spill], merge)
    return section
