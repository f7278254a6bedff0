"""Change config.yaml in place, keeping the user's comments, layout and file mode.

ruamel.yaml round-trips comments and key order; we also keep the indentation the file
already uses, never re-wrap long lines, write through a symlink to its target, and keep a
file that holds only comments. Imported only by the commands that edit the file.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_kernel.config.errors import ConfigError


def _one_line(path: Path, exc: Exception) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ConfigError(
        [f"{where}: cannot edit: {problem}; fix it, then run: hermes config validate"]
    )


def edit_config(
    path: Path,
    change: Callable[[Any], None],
    check: Callable[[str], None] | None = None,
    *,
    write: bool = True,
) -> tuple[str, str]:
    """Load ``path`` round-trip, apply ``change`` to its top-level mapping, write atomically
    (unless ``write`` is False: a preview); the text before and after.

    A missing file is created. ``check`` sees the new text first: an exception it raises
    leaves the file as it was.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    target = path.resolve()  # a symlinked config.yaml stays a symlink
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    data = None
    if text.strip():
        try:
            _, indent, block_seq_indent = load_yaml_guess_indent(text)
            # Loaded again by our own loader: the guesser's drops the quotes it read, and
            # an unrelated ['127.0.0.1'] would come back as [127.0.0.1].
            data = yaml.load(text)
        except YAMLError as exc:
            raise _one_line(path, exc) from None
        if indent is not None:
            yaml.indent(mapping=indent, sequence=indent, offset=block_seq_indent or 0)
    comments_only = data is None and bool(text.strip())
    if data is None:
        data = CommentedMap()
    change(data)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    new_text = buffer.getvalue()
    if comments_only:  # ruamel has no document to attach them to: keep them above
        new_text = text.rstrip("\n") + "\n" + new_text
    if check is not None:
        check(new_text)
    if write:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        atomic_write_text(target, new_text, mode)
    return text, new_text


def set_plugin_enabled(
    path: Path, name: str, enabled: bool, *, foreign: bool = False, allow_list: bool = True
) -> None:
    """Move ``name`` between the lists that enable it and ``plugins.disabled``.

    A Hermes plugin is added to ``plugins.enabled`` only when that list is an allow-list
    (``allow_list``): a list that names only foreign plugins must not become one. A foreign
    plugin is opted in through ``plugins.foreign``; disabling it also takes it out of
    ``plugins.enabled``, and a list left empty that way is removed (empty, it would load
    nothing)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def change(data: Any) -> None:
        plugins = data.get("plugins")
        if plugins is None:
            plugins = data["plugins"] = CommentedMap()
        disabled = plugins.get("disabled")
        allow = plugins.get("enabled")
        if enabled:
            while disabled is not None and name in disabled:
                disabled.remove(name)
            if foreign:
                opted = plugins.get("foreign")
                if opted is None:
                    opted = plugins["foreign"] = CommentedSeq()
                if name not in opted:
                    opted.append(name)
            elif allow is not None and allow_list and name not in allow:
                allow.append(name)
            return
        if disabled is None:
            disabled = plugins["disabled"] = CommentedSeq()
        if not disabled:
            disabled.fa.set_flow_style()  # an empty list was written "[]": stay inline
        if name not in disabled:
            disabled.append(name)
        opted = plugins.get("foreign")
        while opted is not None and name in opted:
            opted.remove(name)
        had = allow is not None and name in allow
        while allow is not None and name in allow:
            allow.remove(name)
        if foreign and had and allow is not None and not allow:
            del plugins["enabled"]

    edit_config(path, change)


def _section(data: Any, name: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    section = data.get(name)
    if not isinstance(section, dict):
        section = data[name] = CommentedMap()
    return section


def allow_approval_rule(path: Path, rule: str) -> None:
    """Add ``rule`` to ``approvals.allow`` (the user answered "always")."""
    _add_to_approvals(path, "allow", rule)


def allow_approval_command(path: Path, command: str) -> None:
    """Add ``command`` to ``approvals.allow_commands`` (the user answered "always, exactly
    this command")."""
    _add_to_approvals(path, "allow_commands", command)


def _add_to_approvals(path: Path, key: str, entry: str) -> None:
    from ruamel.yaml.comments import CommentedSeq

    def change(data: Any) -> None:
        approvals = _section(data, "approvals")
        entries = approvals.get(key)
        if entries is None:
            entries = approvals[key] = CommentedSeq()
        if entry not in entries:
            entries.append(entry)

    edit_config(path, change)


class NotSet(KeyError):
    """``hermes config unset`` of a key the file does not have."""


def _set_in(data: Any, key: str, value: Any) -> None:
    from ruamel.yaml.comments import CommentedMap

    parts = key.split(".")
    node = data
    for at, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = CommentedMap()
        elif not isinstance(child, dict):
            above = ".".join(parts[: at + 1])
            raise ConfigError([f"{above} is a value, not a section: unset it first"])
        node = child
    node[parts[-1]] = value


def _unset_in(data: Any, key: str) -> None:
    parts = key.split(".")
    trail = [data]
    for part in parts[:-1]:
        child = trail[-1].get(part)
        if not isinstance(child, dict):
            raise NotSet(key)
        trail.append(child)
    if parts[-1] not in trail[-1]:
        raise NotSet(key)
    del trail[-1][parts[-1]]
    for parent, part in zip(reversed(trail[:-1]), reversed(parts[:-1]), strict=True):
        if parent[part]:
            break
        del parent[part]


def set_value(path: Path, key: str, value: Any, check: Callable[[str], None] | None = None) -> None:
    """Set the dotted ``key`` (``model.default``) to ``value``, creating sections on the way."""
    edit_config(path, lambda data: _set_in(data, key, value), check)


def unset_value(path: Path, key: str, check: Callable[[str], None] | None = None) -> None:
    """Remove the dotted ``key``, and the sections it leaves empty."""
    edit_config(path, lambda data: _unset_in(data, key), check)


def change_values(
    path: Path,
    values: Mapping[str, Any],
    removed: Iterable[str],
    check: Callable[[str], None] | None = None,
    *,
    write: bool = True,
) -> tuple[str, str]:
    """Set several dotted keys and remove others (a key not set is no error here) in one
    write; the text before and after."""

    def change(data: Any) -> None:
        for key, value in values.items():
            _set_in(data, key, value)
        for key in removed:
            with contextlib.suppress(NotSet):
                _unset_in(data, key)

    return edit_config(path, change, check, write=write)
