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
    from hermes_kernel.runtime.config_change import check_config_text

    def check(text: str) -> None:
        for warning in check_config_text(app, text, (key,) if key else ()):
            click.echo(f"warning: {warning}", err=True)

    return check
