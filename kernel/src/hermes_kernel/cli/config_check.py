"""The check a change to config.yaml passes before it is written: by ``hermes config set``
and by a plugin's command (``CommandContext.edit_config``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from hermes_kernel.app import App

__all__ = ["config_validator"]


def config_validator(app: App, key: str | None = None) -> Callable[[str], None]:
    """Checks the new text as config.yaml would be read: the kernel's sections, then the
    sections plugins own. A problem refuses the change; the file stays as it was. So does
    setting ``key`` when nothing knows it: read from the file, an unknown key is only a
    warning, but one typed into this command is a typo to catch now."""
    import dataclasses

    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.config.settings import _parse_and_validate
    from hermes_kernel.plugins.sections import check_plugin_sections

    def check(text: str) -> None:
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
        parts = key.split(".") if key else []
        prefixes = {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
        found = [f"{finding}: {fix}" for finding, fix in unknown] + report.warnings
        typed = [
            f"{line} (nothing was changed)"
            for line in found
            if any(f"unknown key {prefix!r}" in line for prefix in prefixes)
        ]
        if typed:
            raise ConfigError(typed)
        for warning in warnings + report.warnings:
            click.echo(f"warning: {warning}", err=True)

    return check
