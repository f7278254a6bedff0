"""``hermes import``'s part of built-in memory: a hermes-agent home's MEMORY.md and USER.md
entries come over while they fit this home's budget, and the rest are kept beside them."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_memory_builtin

from hermes_sdk.importing import HomeImport


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def imported(source: Path, target: Path, config: dict, dry_run: bool = False):
    request = HomeImport(
        source_kind="hermes-agent",
        source=str(source),
        target=str(target),
        config=config,
        dry_run=dry_run,
    )
    [section] = hermes_plugin_memory_builtin.hermes_import_home(request)
    return section


def test_entries_come_over_while_they_fit_and_the_rest_is_kept(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    entries = [f"entry {n}: " + "x" * 80 for n in range(5)]
    write(source / "memories" / "MEMORY.md", "\n§\n".join(entries))
    write(target / "memories" / "MEMORY.md", "mine already\n")
    config = {"memory": {"memory_chars": 300}}

    section = imported(source, target, config)

    assert section.kind == "memory entries" and section.reads == ["memories"]
    kept = (target / "memories" / "MEMORY.md").read_text().split("\n§\n")
    assert kept[0] == "mine already" and len("\n§\n".join(kept).rstrip()) <= 300
    assert len(section.added) == len(kept) - 1 == 3
    spilled = (target / "memories" / "MEMORY.md.not-imported").read_text()
    assert spilled.strip().split("\n§\n") == entries[3:]  # nothing is lost
    assert all("over this home's limit of 300" in why for _, why in section.left_out)
    again = imported(source, target, config)
    assert not again.added and len(again.already) == 3
    assert (target / "memories" / "MEMORY.md.not-imported").read_text() == spilled


def test_the_default_budgets_apply_and_a_dry_run_writes_nothing(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "memories" / "USER.md", "Lives in Lisbon\n§\nLikes tea\n")
    section = imported(source, target, {}, dry_run=True)
    assert section.added == ["USER.md: Lives in Lisbon", "USER.md: Likes tea"]
    assert not (target / "memories").exists()
