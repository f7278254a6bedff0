"""``hermes_cli.config`` for hermes-agent plugins on Hermes: our config.yaml, as theirs.

Hermes keeps the keys hermes-agent plugins read and write where hermes-agent does
(``plugins.disabled``, ``memory.provider``, a plugin's own section), but one.
So ``load_config`` is the file as written, with one difference: the foreign plugins Hermes
lets load are ``plugins.foreign`` here and ``plugins.enabled`` there, so the view shows them
as ``plugins.enabled``. ``save_config`` writes back only what the plugin changed, keeping
the file's comments and order; an installer that enables itself
(``cfg["plugins"]["enabled"].append(NAME); save_config(cfg)``) does what
``hermes plugins enable NAME`` does, and never touches Hermes's own allow-list.
"""

from __future__ import annotations

import copy
import io
import os
from typing import Any

import yaml

from hermes_commons.files import atomic_write_text
from hermes_plugin_compat_hermes_agent.served.constants import (
    get_config_path,
    get_env_path,
    get_hermes_home,
    get_process_hermes_home,
)

__all__ = [
    "cfg_get",
    "get_config_path",
    "get_env_path",
    "get_env_value",
    "get_hermes_home",
    "get_process_hermes_home",
    "load_config",
    "load_config_readonly",
    "load_env",
    "read_raw_config",
    "save_config",
]


def read_raw_config() -> dict[str, Any]:
    """config.yaml as written ({} when it is missing or does not parse)."""
    try:
        data = yaml.safe_load(get_config_path().read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _as_theirs(ours: dict[str, Any]) -> dict[str, Any]:
    """Our config as hermes-agent's: the foreign plugins Hermes lets load
    (``plugins.foreign``) are what hermes-agent calls ``plugins.enabled``."""
    view = copy.deepcopy(ours)
    plugins = view.get("plugins")
    if isinstance(plugins, dict):
        plugins["enabled"] = list(plugins.pop("foreign", None) or [])
    return view


_handed_out: list[tuple[dict[str, Any], dict[str, Any]]] = []
"""What ``load_config`` gave, and a copy of it as given: ``save_config`` writes what the
plugin changed in it, never what someone else changed in the file meanwhile."""


def load_config() -> dict[str, Any]:
    """config.yaml as hermes-agent shows it, a copy the caller may change and save."""
    view = _as_theirs(read_raw_config())
    _handed_out.append((view, copy.deepcopy(view)))
    del _handed_out[:-8]
    return view


def load_config_readonly() -> dict[str, Any]:
    return _as_theirs(read_raw_config())


def cfg_get(cfg: dict[str, Any] | None, *keys: str, default: Any = None) -> Any:
    """``cfg[k1][k2]...``, or ``default`` where a key is missing or a value on the way is
    not a mapping (an explicit null is returned as None)."""
    value: Any = cfg
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return default
        value = value[key]
    return value


_GONE = object()


def _changes(before: Any, after: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    """(key path, new value or _GONE) for every leaf ``after`` changed from ``before``."""
    if isinstance(after, dict) and (before is None or isinstance(before, dict)):
        before = before or {}
        found = []
        for key in after.keys() | before.keys():
            if key not in after:
                found.append(((*path, str(key)), _GONE))
            elif key not in before or before[key] != after[key]:
                found += _changes(before.get(key), after[key], (*path, str(key)))
        return found
    return [(path, after)]


def _ours(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Where a key of hermes-agent's view lives in our config."""
    return ("plugins", "foreign") if keys == ("plugins", "enabled") else keys


def save_config(config: dict[str, Any], **_options: Any) -> None:
    """Write what the plugin changed in ``config`` (from what ``load_config`` gave it) into
    config.yaml, keeping the rest of the file as it is now: comments, order, and keys the
    plugin never saw or someone else changed meanwhile."""
    before = next((given for view, given in reversed(_handed_out) if view is config), None)
    changes = _changes(before if before is not None else load_config_readonly(), config, ())
    if changes:
        _write([(_ours(keys), copy.deepcopy(value)) for keys, value in changes])


def _write(changes: list[tuple[tuple[str, ...], Any]]) -> None:
    """Apply ``changes`` to config.yaml with ruamel (comments kept), atomically, through a
    symlink, keeping the file's mode (0600 for a new one)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    path = get_config_path().resolve()
    editor = YAML()
    editor.indent(mapping=2, sequence=4, offset=2)
    document = editor.load(path.read_text(encoding="utf-8")) if path.exists() else None
    if not isinstance(document, dict):
        document = CommentedMap()
    for keys, value in changes:
        parent = document
        for key in keys[:-1]:
            if not isinstance(parent.get(key), dict):
                parent[key] = CommentedMap()
            parent = parent[key]
        if value is _GONE:
            parent.pop(keys[-1], None)
        else:
            parent[keys[-1]] = value
    buffer = io.StringIO()
    editor.dump(document, buffer)
    atomic_write_text(path, buffer.getvalue(), None if path.exists() else 0o600)


def load_env() -> dict[str, str]:
    """``.env`` as KEY=VALUE pairs ({} when it is missing or does not parse)."""
    from hermes_commons.dotenv import DotenvError, read_dotenv

    try:
        return read_dotenv(get_env_path())
    except (OSError, DotenvError):
        return {}


def get_env_value(key: str) -> str | None:
    """The environment's value of ``key``, else ``.env``'s."""
    return os.environ.get(key) or load_env().get(key)
