"""The runtime's administration facet: what the dashboard (or any front-end that configures
Hermes) may change of the home as a whole. The settings of every section, each typed by
its owner; the secrets in .env, never shown in full; the logs; the profiles; which plugins
load; and the dashboard's panels (:mod:`hermes_sdk.dashboard`).

Every change goes through the same checks as the command line (``hermes config set``,
``hermes profile``, ``hermes plugins enable``) and fails with the same one-line errors.
The facet itself, :class:`~hermes_sdk.runtime.RuntimeAdministration`, is beside the
runtime's other facets; these are the values it hands back (imported when first used, so a
one-shot chat does not pay for them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ConfigChange",
    "ConfigField",
    "ConfigSection",
    "LogRead",
    "ProfileEntry",
    "SecretEntry",
]

FieldType = Literal["bool", "int", "float", "text", "choice", "yaml"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigField:
    """One setting: ``key`` is dotted (``agent.retries``); ``value`` and ``default`` are
    YAML text (what ``hermes config set`` takes); ``is_set``: config.yaml names it."""

    key: str
    type: FieldType
    description: str
    value: str
    default: str
    is_set: bool
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigSection:
    name: str
    description: str
    owner: str
    """The plugin that declares it, or ``kernel``."""
    fields: tuple[ConfigField, ...]
    problems: tuple[str, ...] = ()
    """What is wrong with the section as config.yaml has it now, one line each."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigChange:
    """A change to config.yaml, checked: the unified diff of the file, and warnings."""

    diff: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretEntry:
    """A secret by name, its value masked (``…3f9a (40 characters)``), and the file it
    is kept in (``.env``)."""

    name: str
    shown: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LogRead:
    """Lines of a log (redacted), each with its level and component (the logger's name),
    and the cursor to read on from."""

    lines: tuple[tuple[str, str, str], ...]
    """(text, level, component); a traceback's lines carry their record's level."""
    cursor: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileEntry:
    name: str
    home: str
    active: bool
    """The profile later ``hermes`` commands use (``hermes profile use``)."""
    current: bool
    """The home this runtime serves."""
