"""``hermes import hermes-agent``: the plugin folders of a hermes-agent home
(``HERMES_HOME/plugins/NAME/``) come over into this home's ``plugins/``, where this plugin
finds them as it finds any. Only the source is read; a folder already here stays as it is.
The importer carries ``plugins.enabled`` and ``memory.provider`` over, so what was enabled
there is enabled here.

A folder is copied, not linked: the source home may go, and a plugin that keeps files in its
own folder then keeps them here. Links inside it are copied as links.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hermes_sdk.importing import HomeImport, ImportSection

__all__ = ["SOURCE_KINDS", "import_plugin_folders"]

SOURCE_KINDS = frozenset({"hermes-agent"})
KIND = "hermes-agent plugin folders"


def import_plugin_folders(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["plugins"])
    source = Path(request.source) / "plugins"
    if not source.is_dir():
        return section
    target = Path(request.target) / "plugins"
    for folder in sorted(source.iterdir()):
        name = folder.name
        if not folder.is_dir() or name.startswith((".", "_", "__")):
            continue
        if not (folder / "__init__.py").is_file():
            section.left(f"plugins/{name}/", "no __init__.py: not a plugin hermes-agent loads")
            continue
        if (target / name).exists():
            section.skip(f"plugins/{name}/", "this home has one of that name (kept as it is)")
            continue
        section.add(f"plugins/{name}/")
        if not request.dry_run:
            target.mkdir(parents=True, exist_ok=True)
            partial = target / f".{name}.importing"
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(
                folder, partial, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
            )
            partial.rename(target / name)  # whole or not at all: a crash leaves no half
    return section
