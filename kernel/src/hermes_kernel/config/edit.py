"""Change config.yaml in place, keeping the user's comments, order and file mode."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_kernel.config.errors import ConfigError


def edit_config(path: Path, change: Callable[[Any], None]) -> None:
    """Load ``path`` round-trip, apply ``change`` to its top-level mapping, write atomically.

    A missing file is created. The caller has already validated the file, so a parse error
    here is unexpected but still reported as a ConfigError rather than a traceback.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    yaml = YAML()
    yaml.preserve_quotes = True
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    try:
        data = yaml.load(text) if text.strip() else None
    except YAMLError as exc:
        raise ConfigError([f"{path}: cannot edit: {exc}"]) from None
    if data is None:
        data = CommentedMap()
    change(data)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.yaml.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(buffer.getvalue())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def set_plugin_enabled(path: Path, name: str, enabled: bool) -> None:
    """Move ``name`` between ``plugins.enabled`` and ``plugins.disabled``."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def change(data: Any) -> None:
        plugins = data.get("plugins")
        if plugins is None:
            plugins = data["plugins"] = CommentedMap()
        disabled = plugins.get("disabled") or CommentedSeq()
        allow = plugins.get("enabled")
        if enabled:
            while name in disabled:
                disabled.remove(name)
            if allow is not None and name not in allow:
                allow.append(name)
        else:
            if name not in disabled:
                disabled.append(name)
            while allow is not None and name in allow:
                allow.remove(name)
        if disabled or "disabled" in plugins:
            plugins["disabled"] = disabled

    edit_config(path, change)
