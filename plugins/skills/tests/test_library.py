"""Loading real-world SKILL.md variety, the bounded index, and seeding the bundled skills."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from hermes_plugin_skills.index import render_index
from hermes_plugin_skills.library import Library, Source, sources
from hermes_plugin_skills.seed import BUNDLED, MANIFEST, seed

THIRD_PARTY = Path(__file__).parent / "third_party"


def test_third_party_skills_load_with_warnings_and_never_crash() -> None:
    library = Library.load([Source("external", THIRD_PARTY)])
    assert sorted(library.skills) == [
        "Frontend-Design",
        "crlf-skill",
        "k8s-debug",
        "long-description",
        "mcp-builder",
        "pdf-tools",
        "web-scraper",
    ]
    errors = {folder.name: error for folder, error in library.errors}
    assert "not valid YAML" in errors["broken-yaml"]
    assert "must start with a '---' line" in errors["no-frontmatter"]
    warnings = {name: " | ".join(skill.warnings) for name, skill in library.skills.items()}
    assert "should be one space-separated string, not a list" in warnings["pdf-tools"]
    assert library.skills["pdf-tools"].allowed_tools == ("Bash", "Read", "Write")
    assert library.skills["mcp-builder"].allowed_tools == ("Bash(python:*)", "Read", "Write")
    assert warnings["mcp-builder"] == ""
    assert "differs from its folder 'Web_Scraper'" in warnings["web-scraper"]
    assert "outside the specification" not in warnings["web-scraper"]  # Hermes reads tags, version
    assert "at most 1024" in warnings["long-description"]
    assert "lowercase letters" in warnings["Frontend-Design"]
    assert library.skills["Frontend-Design"].description == (
        "Build beautiful frontends; avoid generic AI aesthetics."
    )
    assert library.skills["crlf-skill"].description.startswith("Written on Windows")
    assert library.skills["k8s-debug"].folder.parent.name == "devops"  # a category folder


def test_the_first_source_wins_a_name_clash(tmp_path: Path) -> None:
    mine = tmp_path / "mine" / "k8s-debug"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: k8s-debug\ndescription: my own way\n---\nx\n")
    library = Library.load(
        [Source("user", tmp_path / "mine", writable=True), Source("external", THIRD_PARTY)]
    )
    assert library.skills["k8s-debug"].description == "my own way"
    assert [hidden.source for _, hidden in library.shadowed] == ["external"]


def test_sources_in_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".agents/skills").mkdir(parents=True)
    (project / "src").mkdir()
    found = sources(
        str(tmp_path / "hermes"),
        str(project / "src"),
        {"skills": {"external_dirs": ["~/shared-skills"]}},
        [("k8s", tmp_path / "plugin-skills")],
    )
    assert [(s.name, s.writable) for s in found] == [
        ("user", True),
        ("project", False),
        ("personal", False),
        ("plugin:k8s", False),
        ("external", False),
    ]
    assert found[1].root == project / ".agents/skills"
    assert found[4].root == tmp_path / "user-home/shared-skills"


def many_skills(root: Path, count: int) -> Library:
    for n in range(count):
        folder = root / f"skill-{n:04d}"
        folder.mkdir(parents=True)
        description = f"Does task number {n} " + "with a fairly long explanation " * 6
        (folder / "SKILL.md").write_text(
            f"---\nname: {folder.name}\ndescription: {description}\n---\nx\n"
        )
    return Library.load([Source("user", root, writable=True)])


def test_the_index_stays_within_its_budget_however_many_skills(tmp_path: Path) -> None:
    for count, budget in ((10, 6000), (1000, 6000), (1000, 2000)):
        library = many_skills(tmp_path / f"{count}-{budget}", count)
        index = render_index(library, budget)
        assert len(index) <= budget
        if count == 10:
            assert index.count("\n- skill-") == 10 and "more" not in index
        else:
            assert "- skill-0000: Does task number 0" in index
            assert "Also: " in index and "more: skills_list(query=...) finds them." in index


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bundled_skills_are_seeded_once_and_user_edits_survive_updates(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    written = seed(root)
    assert "writing-skills/SKILL.md" in written and "release-notes/scripts/commits.sh" in written
    assert seed(root) == []  # nothing changed: nothing to do
    edited = root / "code-review/SKILL.md"
    edited.write_text(edited.read_text() + "\nMy own addition.\n")
    shutil.rmtree(root / "git-bisect-regression")
    outdated = root / "writing-skills/SKILL.md"
    outdated.write_text("---\nname: writing-skills\ndescription: an older bundled version\n---\n")
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["bundle"] = "an older bundle"
    manifest["files"]["writing-skills/SKILL.md"] = digest(outdated)  # as seeded back then
    (root / MANIFEST).write_text(json.dumps(manifest))

    assert seed(root) == ["writing-skills/SKILL.md"]
    assert outdated.read_bytes() == (BUNDLED / "writing-skills/SKILL.md").read_bytes()
    assert edited.read_text().endswith("My own addition.\n")
    assert not (root / "git-bisect-regression").exists()  # deleted by the user: stays deleted


def test_every_bundled_skill_follows_the_specification() -> None:
    library = Library.load([Source("bundled", BUNDLED)])
    assert len(library.skills) >= 5 and not library.errors
    assert {name: skill.warnings for name, skill in library.skills.items() if skill.warnings} == {}


def test_a_skill_read_before_is_reused_until_its_file_changes(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    skill_md = folder / "SKILL.md"
    skill_md.write_text("---\nname: notes\ndescription: Take notes.\n---\nBody one.\n")
    first = Library.load([Source("user", tmp_path)]).skills["notes"]
    assert Library.load([Source("user", tmp_path)]).skills["notes"] is first  # not re-read
    skill_md.write_text("---\nname: notes\ndescription: Take better notes.\n---\nBody two.\n")
    again = Library.load([Source("user", tmp_path)]).skills["notes"]
    assert (again.description, again.body.strip()) == ("Take better notes.", "Body two.")
    skill_md.write_text("not a skill any more")
    assert "notes" not in Library.load([Source("user", tmp_path)]).skills


def _skill(root: Path, name: str, frontmatter: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\nDo the thing.\n")
    return folder


def _age(root: Path) -> None:
    """Every SKILL.md under ``root`` as if written a minute ago (a file changed in the last
    two seconds is not cached)."""
    import os
    import time

    for path in root.rglob("SKILL.md"):
        os.utime(path, (time.time() - 60, time.time() - 60))


def test_parsed_frontmatter_is_kept_between_processes_without_yaml(tmp_path: Path) -> None:
    """A second process reads each unchanged frontmatter from the cache, not from YAML;
    an edited skill is parsed afresh, a damaged cache is a miss, and a frontmatter JSON
    cannot hold (a date) is simply parsed each time."""
    import subprocess
    import sys

    root = tmp_path / "skills"
    _skill(root, "alpha", "name: alpha\ndescription: First.\nmetadata: {owner: me}\n")
    _skill(root, "dated", "name: dated\ndescription: Has a date.\ncreated: 2026-01-02\n")
    _age(root)
    cache = tmp_path / "cache" / "frontmatter.json"
    first = Library.load([Source("user", root)], cache)
    assert first.skills["alpha"].frontmatter["metadata"] == {"owner": "me"}
    stored = json.loads(cache.read_text())
    assert len(stored) == 1, "the dated skill's frontmatter is not JSON: left out"
    (key,) = stored
    assert "/alpha/SKILL.md:" in key  # by the file's stat: read next time without opening it

    probe = f"""
import sys
from pathlib import Path
from hermes_plugin_skills.library import Library, Source
library = Library.load([Source("user", Path({str(root)!r}))], Path({str(cache)!r}))
print(sorted(library.skills), library.skills["alpha"].description, "yaml" in sys.modules)
"""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert run.stdout.split() == ["['alpha',", "'dated']", "First.", "True"], run.stderr
    (root / "dated").rename(tmp_path / "elsewhere")  # only alpha now: no YAML at all
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert run.stdout.split() == ["['alpha']", "First.", "False"], run.stderr

    (root / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: Edited.\n---\nX\n")
    fresh = Library.load([Source("user", root)], cache)
    assert fresh.skills["alpha"].description == "Edited."
    stored_now = json.loads(cache.read_text()).values()
    assert "Edited." not in [v["description"] for v in stored_now]  # changed just now: racy
    _age(root)
    cache.write_text("{not json")
    edited = Library.load([Source("user", root)], cache)
    assert edited.skills["alpha"].description == "Edited."
    kept = json.loads(cache.read_text())
    assert [v["description"] for v in kept.values()] == ["Edited."]
    assert [v["meta"] for v in kept.values()] == [{"name": "alpha", "description": "Edited."}]
    written = cache.stat().st_mtime_ns
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert cache.stat().st_mtime_ns == written  # another process, nothing new: left alone
