"""``hermes import SOURCE``: the kernel's command over any importer a plugin yields, with
the plugins' parts of each home (here a second importer, of a made-up "notes-tool", and a
plugin that brings its own folder over, written as real plugin modules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

IMPORTER = """
from pathlib import Path
from hermes_sdk import ImporterSpec, hookimpl
from hermes_sdk.importing import HomeImport, ImportedHome, ImportRefused, ImportSection

class NotesTool:
    def detect(self, path):
        return (path / "notes.db").exists()

    def check(self, source, target):
        if not self.detect(source):
            raise ImportRefused(f"{source} is not a notes-tool home")

    def run(self, request):
        home = ImportedHome(str(request.source), str(request.target))
        own = home.section(ImportSection("settings"))
        own.add("notes.db")
        for part in request.import_parts(HomeImport(
            source_kind="notes-tool", source=str(request.source),
            target=str(request.target), dry_run=request.dry_run,
        )):
            home.section(part)
        return [home]

@hookimpl
def hermes_importers():
    yield ImporterSpec(name="notes-tool", description="a notes-tool home",
                       default_path="~/.notes-tool", factory=NotesTool)
"""

PART = """
from pathlib import Path
from hermes_sdk import hookimpl
from hermes_sdk.importing import ImportSection

@hookimpl
def hermes_import_home(request):
    if request.source_kind != "notes-tool":
        return
    section = ImportSection("pages", reads=["pages"])
    for page in sorted(Path(request.source, "pages").glob("*.md")):
        mine = Path(request.target, "pages", page.name)
        if mine.exists():
            section.skip(page.name, "already there")
            continue
        section.add(page.name)
        if not request.dry_run:
            mine.parent.mkdir(parents=True, exist_ok=True)
            mine.write_text(page.read_text())
    yield section
"""

BROKEN = """
from hermes_sdk import hookimpl

@hookimpl
def hermes_import_home(request):
    raise OSError("its disk is gone")
"""


@pytest.fixture
def hermes(hermes_cli, make_plugin, monkeypatch, tmp_path):
    records = [
        make_plugin("notes-importer", IMPORTER, declares=["importer.notes-tool"]),
        make_plugin("pages", PART, declares=["hook.hermes_import_home"]),
        make_plugin("broken", BROKEN, declares=["hook.hermes_import_home"]),
    ]
    monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: records)
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    source = tmp_path / "notes-home"
    (source / "pages").mkdir(parents=True)
    (source / "notes.db").write_text("")
    (source / "pages" / "a.md").write_text("A\n")
    (source / "pages" / "b.md").write_text("B\n")
    hermes_cli.source = source
    return hermes_cli


def test_a_second_importer_runs_with_every_plugins_part(hermes):
    home: Path = hermes.home
    code, out, err = hermes("import", "notes-tool", str(hermes.source), "--yes", "--details")
    assert code == 0, err
    assert "  pages: 2 came over\n    + a.md\n    + b.md\n" in out
    assert "  plugin broken: 0 came over, 1 left\n" in out
    assert (
        "    - its part of the home: it failed: OSError: its disk is gone; import again later"
        in (out)
    )
    assert (home / "pages" / "a.md").read_text() == "A\n"
    code, out, _ = hermes("import", "notes-tool", str(hermes.source), "--yes", "--json")
    assert code == 0
    [report] = json.loads(out)["homes"]
    pages = next(s for s in report["sections"] if s["kind"] == "pages")
    assert pages["imported"] == 0 and len(pages["already_there"]) == 2


def test_a_dry_run_writes_nothing_and_a_wrong_folder_is_refused(hermes, tmp_path):
    code, out, _ = hermes("import", "notes-tool", str(hermes.source), "--dry-run")
    assert code == 0 and "pages: 2 would come over" in out and "Nothing was changed" in out
    assert not (hermes.home / "pages").exists()
    code, _, err = hermes("import", "notes-tool", str(tmp_path), "--yes")
    assert code == 1 and f"{tmp_path} is not a notes-tool home" in err


def test_an_unknown_source_names_the_installed_importers(hermes):
    code, _, err = hermes("import", "hermes-agent")
    assert code == 1
    assert err.strip() == (
        "Error: no importer for 'hermes-agent'; installed: notes-tool (a notes-tool home)"
    )
    code, _, err = hermes("import", str(hermes.source))
    assert "(that folder is a notes-tool home: hermes import notes-tool" in err
