"""``hermes import hermes-agent`` brings the home's plugin folders over (whole or not at all)."""

from __future__ import annotations

from dataclasses import replace

from hermes_plugin_compat_hermes_agent.importing import import_plugin_folders

from hermes_sdk.importing import HomeImport


def test_plugin_folders_come_over_and_ours_are_kept(tmp_path):
    source, target = tmp_path / "theirs", tmp_path / "ours"
    for name in ("local_memory", "guard", "notes"):
        (source / "plugins" / name).mkdir(parents=True)
    (source / "plugins" / "local_memory" / "__init__.py").write_text("def register(ctx): pass\n")
    (source / "plugins" / "local_memory" / "__pycache__").mkdir()
    (source / "plugins" / "guard" / "__init__.py").write_text("def register(ctx): pass\n")
    (target / "plugins" / "guard").mkdir(parents=True)
    (target / "plugins" / "guard" / "__init__.py").write_text("# mine\n")

    request = HomeImport(source_kind="hermes-agent", source=str(source), target=str(target))
    dry = import_plugin_folders(replace(request, dry_run=True))
    assert dry.added == ["plugins/local_memory/"] and not (target / "plugins/local_memory").exists()

    section = import_plugin_folders(request)
    assert section.added == ["plugins/local_memory/"]
    assert [what for what, _ in section.already] == ["plugins/guard/"]
    assert [what for what, _ in section.left_out] == ["plugins/notes/"]
    assert (target / "plugins/local_memory/__init__.py").read_text() == "def register(ctx): pass\n"
    assert not (target / "plugins/local_memory/__pycache__").exists()
    assert (target / "plugins/guard/__init__.py").read_text() == "# mine\n"
    assert section.reads == ["plugins"]
