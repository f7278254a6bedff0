"""Another tool's home met by accident (HERMES_HOME pointing at it): the importers installed
are asked whether it is theirs (``Importer.recognize``), and every command then says so in one
line with the import that brings it over, instead of warning about unknown keys or failing on
a state.db that is not ours. The kernel knows no other tool: what marks a home as one is the
importer's."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_kernel.config.controls import PluginSettings
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.plugins.discovery import discover
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_sdk.specs import ImporterSpec

__all__ = ["ForeignHome", "ForeignHomeError", "recognize", "recognize_home"]

log = logging.getLogger("hermes")


@dataclass(frozen=True)
class ForeignHome:
    home: Path
    importer: str
    evidence: str

    @property
    def problem(self) -> str:
        return f"{self.home}: this is a {self.importer} home ({self.evidence})"

    @property
    def fix(self) -> str:
        """The one command that brings it over, into another home: an import only reads its
        source (the importer contract)."""
        home, name = self.home, self.importer
        return (
            f"run `hermes import {name} {home}` with HERMES_HOME set to a new folder, for "
            f"example `HERMES_HOME={home}-new hermes import {name} {home}` (it reads this "
            "home and changes nothing in it)"
        )

    @property
    def line(self) -> str:
        return f"{self.problem}: {self.fix}"


class ForeignHomeError(ConfigError):
    """HERMES_HOME is another tool's: one line, with the import as the fix."""

    def __init__(self, found: ForeignHome) -> None:
        super().__init__([found.line])
        self.found = found
        self.problem = found.problem
        self.fix = found.fix


def recognize(home: Path, importers: Sequence[ImporterSpec]) -> ForeignHome | None:
    """The first importer (by name) that says ``home`` is its tool's; an importer that fails
    to answer is skipped (logged), never an error of the command that asked."""
    for spec in sorted(importers, key=lambda spec: spec.name):
        try:
            importer = spec.build()
            ask = getattr(importer, "recognize", None)
            if ask is not None:
                evidence = ask(home)
            else:
                evidence = f"it looks like a {spec.name} home" if importer.detect(home) else None
        except Exception as exc:  # noqa: BLE001 - a plugin's failure, not the command's
            log.debug("importer %s could not tell whether %s is its home: %s", spec.name, home, exc)
            continue
        if evidence:
            return ForeignHome(home, spec.name, str(evidence))
    return None


def recognize_home(home: Path, safe_mode: bool = False) -> ForeignHome | None:
    """:func:`recognize` with the importers installed. Only they are loaded, under the
    environment's plugin controls: the config.yaml that would choose plugins is the home's
    own, and unreadable as ours."""
    try:
        policy = PluginPolicy.from_sources(PluginSettings(), os.environ, safe_mode)
        importers = PluginHost(discover(home / "cache"), policy).importers()
    except Exception as exc:  # noqa: BLE001 - asked while reporting another error: never mask it
        log.debug("could not ask the importers about %s: %s", home, exc)
        return None
    return recognize(home, importers)
