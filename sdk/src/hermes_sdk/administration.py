"""The runtime's administration facet: what the dashboard (or any front-end that configures
Hermes) may change of the home as a whole. The settings of every section, each typed by
its owner; the secrets in .env, never shown in full; the logs; the profiles; which plugins
load; and the dashboard's panels (:mod:`hermes_sdk.dashboard`).

Every change goes through the same checks as the command line (``hermes config set``,
``hermes profile``, ``hermes plugins enable``) and fails with the same one-line errors.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hermes_sdk.dashboard import Panel, PanelInfo

__all__ = [
    "ConfigChange",
    "ConfigField",
    "ConfigSection",
    "LogRead",
    "ProfileEntry",
    "RuntimeAdministration",
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
    """A secret by name, its value masked (``sk-…3f9a``), where it comes from
    (``.env`` or ``environment``), and the plugins that read it."""

    name: str
    shown: str
    source: str
    used_by: tuple[str, ...] = ()


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


class RuntimeAdministration(abc.ABC):
    """What a front-end may change of the whole agent. Every method is safe to call from
    the event loop; blocking work runs in a thread. Errors are ValueError with one line
    saying what to fix; nothing is changed then."""

    @abc.abstractmethod
    async def config_sections(self) -> list[ConfigSection]:
        """Every section of config.yaml, the kernel's and each plugin's, with its fields as
        typed by its owner's model: description, default, value now."""

    @abc.abstractmethod
    async def read_config(self) -> dict[str, Any]:
        """config.yaml as it is now (a page that changed it shows the change before a
        restart applies it); ValueError (one line) when it cannot be read."""

    @abc.abstractmethod
    async def change_config(self, changes: Mapping[str, str | None], *, save: bool) -> ConfigChange:
        """Set each dotted key to its YAML text (None: remove it, so its default applies),
        checked as ``hermes config set`` checks (types, unknown keys with did-you-mean,
        secret-looking keys refused). ``save=False`` only says what would change. Comments
        and layout are kept; the file is replaced atomically."""

    @abc.abstractmethod
    async def secrets(self) -> list[SecretEntry]:
        """The secrets of .env and those the plugins read (``[tool.hermes] environment``),
        each masked."""

    @abc.abstractmethod
    async def set_secret(self, name: str, value: str) -> str:
        """Write ``name`` to .env (mode 0600); one line saying so."""

    @abc.abstractmethod
    def log_names(self) -> list[str]:
        """The logs in HERMES_HOME/logs (``agent``, ``errors``, a front-end's own), the one
        this process writes first."""

    @abc.abstractmethod
    async def read_log(
        self,
        name: str,
        cursor: str = "",
        *,
        level: str = "",
        component: str = "",
        limit: int = 200,
    ) -> LogRead:
        """The lines of log ``name`` after ``cursor`` (``""``: the last ``limit``), at
        ``level`` or above, whose component starts with ``component``; redacted again as
        they are read."""

    @abc.abstractmethod
    async def profiles(self) -> list[ProfileEntry]:
        """The default home and every profile."""

    @abc.abstractmethod
    async def create_profile(self, name: str, *, clone: bool) -> str:
        """Create profile ``name`` (with this home's config.yaml, .env and SOUL.md when
        ``clone``); one line."""

    @abc.abstractmethod
    async def use_profile(self, name: str) -> str:
        """Make ``name`` the profile later ``hermes`` commands use; one line. The running
        process keeps its home."""

    @abc.abstractmethod
    async def set_plugin_enabled(self, name: str, enabled: bool) -> str:
        """Enable or disable plugin ``name`` in config.yaml, as ``hermes plugins enable``
        does; one line (a restart applies it)."""

    @abc.abstractmethod
    async def panels(self) -> list[PanelInfo]:
        """The dashboard's panels (``hermes_dashboard_panels``), in order."""

    @abc.abstractmethod
    async def panel(self, name: str) -> Panel:
        """Panel ``name``, built once; KeyError (one line) when no plugin provides it."""
