"""config.yaml as a front-end changes it: the check every change passes (``hermes config
set`` and ``CommandContext.edit_config`` use it too), several keys changed in one atomic
write with its diff, and each section's fields as its owner's model types them."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_kernel.config.errors import ConfigError
from hermes_sdk.administration import ConfigChange

if TYPE_CHECKING:
    from hermes_kernel.app import App

__all__ = ["change_config", "check_config_text", "key_problem", "parsed_value"]

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_][A-Za-z0-9_-]*)*$")
SECRET_NAME = re.compile(r"(api_?key|token|secret|password|passwd)$", re.IGNORECASE)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be set in config.yaml, or None."""
    if not KEY.match(key):
        return f"{key!r} is not a dotted key like model.default or agent.retries"
    if SECRET_NAME.search(key.rsplit(".", 1)[-1]):
        return (
            f"{key} looks like a secret: secrets live in HERMES_HOME/.env (mode 0600), never "
            "in config.yaml; put it there (hermes setup writes provider keys)"
        )
    return None


def parsed_value(text: str) -> Any:
    """A value as YAML reads it: ``true``, ``5``, ``[a, b]``, ``{k: v}``; else the text."""
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        return text


def check_config_text(app: App, text: str, keys: tuple[str, ...] = ()) -> list[str]:
    """Check ``text`` as config.yaml would be read: the kernel's sections, then the sections
    plugins own; the warnings. A problem raises ConfigError. So does a key of ``keys``
    nothing knows: read from the file an unknown key is only a warning, but one typed in
    to set is a typo to catch now."""
    from hermes_kernel.config.settings import _parse_and_validate
    from hermes_kernel.plugins.sections import check_plugin_sections

    settings = app.settings
    try:
        document, plugins, warnings, unknown, _safety = _parse_and_validate(
            settings.config_path, text.encode()
        )
    except ConfigError as exc:
        raise ConfigError([f"{p} (nothing was changed)" for p in exc.problems]) from None
    trial = dataclasses.replace(settings, document=document, plugins=plugins)
    report = check_plugin_sections(trial, app.host)
    if report.problems:
        raise ConfigError([f"{p} (nothing was changed)" for p in report.problems])
    prefixes = set()
    for key in keys:
        parts = key.split(".")
        prefixes |= {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
    found = [f"{finding}: {fix}" for finding, fix in unknown] + report.warnings
    typed = [
        f"{line} (nothing was changed)"
        for line in found
        if any(f"unknown key {prefix!r}" in line for prefix in prefixes)
    ]
    if typed:
        raise ConfigError(typed)
    return warnings + report.warnings


def change_config(app: App, changes: Mapping[str, str | None], *, save: bool) -> ConfigChange:
    """Set each key to its YAML text (None: remove it) in one checked write (or none, when
    not ``save``); ValueError with one line when refused."""
    from hermes_kernel.config.edit import change_values

    if not changes:
        raise ValueError("nothing to change: edit a field first")
    for key, text in changes.items():
        problem = key_problem(key)
        # A secret-looking key is never set here; removing one (put there by hand) is fine.
        if problem is not None and (text is not None or not KEY.match(key)):
            raise ValueError(problem)
    values = {key: parsed_value(text) for key, text in changes.items() if text is not None}
    removed = [key for key, text in changes.items() if text is None]
    warnings: list[str] = []

    def check(text: str) -> None:
        warnings.extend(check_config_text(app, text, tuple(values)))

    path = app.settings.config_path
    try:
        before, after = change_values(path, values, removed, check, write=save)
    except ConfigError as exc:
        raise ValueError("; ".join(exc.problems)) from None
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "config.yaml (now)",
            "config.yaml (after)",
        )
    )
    return ConfigChange(diff=diff, warnings=tuple(warnings))
