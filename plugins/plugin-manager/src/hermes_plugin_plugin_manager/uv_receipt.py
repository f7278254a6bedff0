"""Keep a uv tool environment's receipt in step with the plugins installed into it.

``uv tool upgrade`` rebuilds a tool's environment from the requirements in its
``uv-receipt.toml`` and removes everything else, so a plugin installed with ``uv pip`` alone
would vanish on the next upgrade. After each install, upgrade or uninstall, the plugins'
requirements are written into the receipt exactly as ``uv tool install --with`` writes them
(name plus ``specifier``, ``git``, ``path``, ``url``, ``directory`` or ``editable``), and
every other byte of meaning in the file (entry points, options) is kept.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from hermes_plugin_plugin_manager.environment import Installed, InstallerError, normalize

RECEIPT = "uv-receipt.toml"


def requirement_of(dist: Installed) -> dict[str, str]:
    """The receipt entry that reinstalls ``dist`` from where it came (PEP 610 direct_url)."""
    entry = {"name": dist.name}
    url = dist.direct_url
    if not url:  # from an index: pinned, so that `uv tool upgrade` keeps the version chosen
        return {**entry, "specifier": f"=={dist.version}"}
    location = str(url.get("url", ""))
    vcs = url.get("vcs_info")
    if isinstance(vcs, dict):
        query = f"subdirectory={url['subdirectory']}&" if url.get("subdirectory") else ""
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        return {**entry, "git": f"{location}?{query}rev={revision}"}
    local = unquote(urlsplit(location).path) if location.startswith("file:") else None
    info = url.get("dir_info")
    if isinstance(info, dict) and local is not None:
        return {**entry, ("editable" if info.get("editable") else "directory"): local}
    if local is not None:
        return {**entry, "path": local}
    return {**entry, "url": location}


def record(
    prefix: Path, changed: Iterable[Installed], added: set[str], removed: Iterable[str]
) -> list[str]:
    """Bring the receipt up to date after a change: entries of ``changed`` plugins are
    rewritten, those ``added`` by this change are appended (a plugin that came with the tool's
    own package stays its dependency), and ``removed`` ones are dropped. The tool's package
    (the first requirement) is never touched. Returns the ``removed`` names the receipt did
    not list: dependencies of the tool's package, which an upgrade brings back."""
    path = prefix / RECEIPT
    try:
        receipt = tomllib.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InstallerError(f"{path}: cannot read the uv tool receipt ({exc})") from None
    tool = receipt.get("tool")
    if not isinstance(tool, dict) or not isinstance(tool.get("requirements"), list):
        raise InstallerError(f"{path}: no [tool] requirements; reinstall the tool with uv")
    requirements: list[dict[str, Any]] = tool["requirements"]
    main, rest = requirements[:1], requirements[1:]
    listed = {normalize(str(item.get("name", ""))) for item in rest}
    new = {normalize(name) for name in added}
    changing = {
        normalize(dist.name): dist for dist in changed if normalize(dist.name) in listed | new
    }
    unlisted = [name for name in removed if normalize(name) not in listed]
    gone = {normalize(name) for name in removed} | changing.keys()
    rest = [item for item in rest if normalize(str(item.get("name", ""))) not in gone]
    rest += [requirement_of(dist) for dist in changing.values()]
    tool["requirements"] = main + rest
    path.write_text(dumps(receipt), encoding="utf-8")
    return unlisted


def dumps(document: dict[str, Any]) -> str:
    """TOML for what a receipt holds: tables of strings, numbers, booleans and arrays (of
    those or of inline tables), in uv's own layout."""
    lines: list[str] = []
    _table(document, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(table: dict[str, Any], name: list[str], lines: list[str]) -> None:
    if name:
        lines += ["", f"[{'.'.join(name)}]"]
    nested = {k: v for k, v in table.items() if isinstance(v, dict)}
    for key, value in table.items():
        if key in nested:
            continue
        if isinstance(value, list) and any(isinstance(item, dict) for item in value):
            lines.append(f"{_key(key)} = [")
            lines += [f"    {_value(item)}," for item in value]
            lines.append("]")
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in nested.items():
        _table(value, [*name, _key(key)], lines)


def _key(key: str) -> str:
    bare = key.replace("-", "").replace("_", "").isalnum()
    return key if bare else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise ValueError(f"cannot write {type(value).__name__} values into a uv receipt")
