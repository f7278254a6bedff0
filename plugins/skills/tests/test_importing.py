"""``hermes import``'s part of the skills plugin: a hermes-agent home's skill folders come
over with every file they hold, at the same place, and a place already taken is kept."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_skills

from hermes_sdk.importing import HomeImport


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def imported(source: Path, target: Path, dry_run: bool = False):
    request = HomeImport(
        source_kind="hermes-agent", source=str(source), target=str(target), dry_run=dry_run
    )
    [section] = hermes_plugin_skills.hermes_import_home(request)
    return section


def test_skills_come_with_their_files_and_categories(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "skills" / "ops" / "deploy" / "SKILL.md", "---\nname: ship-it\n---\nbody\n")
    write(source / "skills" / "ops" / "deploy" / "references" / "notes.md", "notes\n")
    write(source / "skills" / "tidy" / "SKILL.md", "---\nname: tidy\n---\nTidy up.\n")
    write(source / "skills" / ".hub" / "lock.json", "{}")
    write(source / "skills" / ".bundled_manifest", "tidy: 1.0\n")
    section = imported(source, target)
    assert section.kind == "skills" and section.reads[0] == "skills"
    assert section.added == ["ops/deploy", "tidy (one of hermes-agent's bundled skills)"]
    assert (target / "skills" / "ops" / "deploy" / "references" / "notes.md").exists()
    assert not (target / "skills" / ".hub").exists()
    assert "names it 'ship-it'" in section.notes[0]
    again = imported(source, target)
    assert again.added == [] and len(again.already) == 2


def test_a_dry_run_copies_nothing(tmp_path):
    source, target = tmp_path / "ha", tmp_path / "ours"
    write(source / "skills" / "tidy" / "SKILL.md", "---\nname: tidy\n---\nTidy up.\n")
    assert imported(source, target, dry_run=True).added == ["tidy"]
    assert not (target / "skills").exists()
