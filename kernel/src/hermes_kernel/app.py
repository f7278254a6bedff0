"""Per-invocation state shared by commands: settings and the plugin host, built lazily so a
command pays only for what it touches (``hermes --version`` touches nothing)."""

from __future__ import annotations

import logging
import os
from functools import cached_property
from pathlib import Path

from hermes_kernel.config.defaults import LOGGING_LEVEL
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.home import resolve_home
from hermes_kernel.config.private_home import make_private
from hermes_kernel.config.settings import Flags, Settings, load_settings
from hermes_kernel.foreign_homes import ForeignHomeError, recognize_home
from hermes_kernel.log import RedactingFilter, log_to_files
from hermes_kernel.plugins.discovery import discover
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_kernel.plugins.records import LoadOutcome, PluginRecord
from hermes_kernel.plugins.status_cache import write_status
from hermes_kernel.plugins.trace import stderr_tracer, tracing_enabled
from hermes_kernel.safety.environment import secret_environment_values

log = logging.getLogger("hermes")


class App:
    """What one ``hermes`` invocation knows; every attribute is computed on first use."""

    def __init__(self, flags: Flags, redactor: RedactingFilter | None = None) -> None:
        self.flags = flags
        self._redactor = redactor
        self._loaded: list[tuple[PluginRecord, LoadOutcome]] = []
        self.rescan = False
        """Set before ``records`` is used to bypass the discovery cache (``--verify``)."""
        self.log_name = "agent"
        """Which HERMES_HOME/logs file this run writes (a front-end may choose its own)."""

    @cached_property
    def settings(self) -> Settings:
        """config.yaml and .env; raises ConfigError (reported by ``main``) when malformed,
        and ForeignHomeError when an importer recognises the home as its tool's."""
        try:
            settings = load_settings(self.flags)
        except ConfigError:
            self._refuse_foreign(resolve_home(self.flags.home, self.flags.profile, os.environ))
            raise
        if settings.unknown_keys:  # keys we do not know: perhaps another tool's home
            self._refuse_foreign(settings.home)
        opened = self._made_private(settings.home)
        if self._redactor is not None:
            self._redactor.secret_values.extend(settings.secrets.values())
            # Keys in the environment (any *_API_KEY, GITHUB_TOKEN ...) are secrets too.
            self._redactor.secret_values.extend(secret_environment_values(settings.environ))
            log_to_files(settings.home, self._redactor, self.log_name, self._log_level(settings))
        make_private(settings.home)  # created just now by the logs: private from the start
        if opened:
            shown = ", ".join(opened[:4]) + (
                f" and {len(opened) - 4} more" if len(opened) > 4 else ""
            )
            secrets = " (.env was readable by others: rotate its keys)" if ".env" in opened else ""
            log.warning(
                "made HERMES_HOME private: %s %s open to other users; now 700/600%s",
                shown,
                "was" if len(opened) == 1 else "were",
                secrets,
            )
        for warning in settings.warnings:
            log.warning("%s", warning)
        self._warn_unknown_top_level(settings)
        return settings

    def _warn_unknown_top_level(self, settings: Settings) -> None:
        """A top-level key nobody owns is said at every start (it is ignored)."""
        from hermes_kernel.config.controls import KERNEL_SECTIONS

        if all(key in KERNEL_SECTIONS for key in settings.document.data):
            return  # the usual case: nothing to look up
        from hermes_kernel.plugins.sections import unknown_top_level

        # ``records`` reads settings, which are being made: discover here, and keep the result.
        records = discover(settings.home / "cache", rescan=self.rescan)
        self.__dict__["records"] = records
        for line in unknown_top_level(settings.document, records):
            log.warning("%s", line)

    @staticmethod
    def _made_private(home: Path) -> list[str]:
        """HERMES_HOME made private (700/600); what was open, when that is worth a line:
        the folder itself was open while it held a log of Hermes's work. Raises ConfigError
        when its .env stays readable by others (another user owns it)."""
        ran_here = (home / "logs").is_dir()
        opened = make_private(home)
        dotenv = home / ".env"
        if dotenv.exists() and dotenv.stat().st_mode & 0o077:
            raise ConfigError(
                [
                    f"{dotenv} is readable by other users and could not be made private: "
                    f"run chmod 600 {dotenv} as its owner (and rotate its keys)"
                ]
            )
        return opened if ran_here and "." in opened else []

    @staticmethod
    def _log_level(settings: Settings) -> str:
        section = settings.raw.get("logging")
        level = section.get("level") if isinstance(section, dict) else None
        return level if isinstance(level, str) else LOGGING_LEVEL

    def _refuse_foreign(self, home: Path) -> None:
        found = recognize_home(home, self.flags.safe_mode)
        if found is not None:
            raise ForeignHomeError(found)

    def remember_secret(self, value: str) -> None:
        """A secret written to .env while running: redacted from the logs from now on."""
        if self._redactor is not None and value and value not in self._redactor.secret_values:
            self._redactor.secret_values.append(value)

    def use_log(self, name: str) -> None:
        """Write HERMES_HOME/logs/NAME.log from now on (a long-running front-end's own log)."""
        self.log_name = name
        if "settings" in self.__dict__ and self._redactor is not None:
            log_to_files(self.settings.home, self._redactor, name, self._log_level(self.settings))

    @cached_property
    def records(self) -> list[PluginRecord]:
        return discover(self.settings.home / "cache", rescan=self.rescan)

    @cached_property
    def host(self) -> PluginHost:
        settings = self.settings
        plugins = settings.plugins
        # A name plugins.enabled also gives may be a foreign plugin, found only later (and a
        # name nothing has is said once, as plugins.enabled's).
        _warn_unknown_isolated(
            tuple(
                name
                for name in plugins.isolated
                if name not in (plugins.enabled or ()) and name not in plugins.foreign
            ),
            self.records,
        )
        return PluginHost(
            self.records,
            PluginPolicy.from_sources(plugins, settings.environ, self.flags.safe_mode),
            timeout=plugins.load_timeout_seconds,
            hook_timeout=plugins.hook_timeout_seconds,
            isolated=plugins.isolated,
            strict=settings.strict_plugins,
            tracer=stderr_tracer() if tracing_enabled() else None,
            on_outcome=lambda record, outcome: self._loaded.append((record, outcome)),
            home=settings.home,
        )

    def close(self) -> None:
        """Remember this run's load results for ``hermes plugins list``, and end the
        isolated plugins' host processes."""
        if "host" in self.__dict__:
            self.host.stop_isolated()
        if self._loaded and "settings" in self.__dict__:
            run_time = self.host.run_time_states() if "host" in self.__dict__ else {}
            write_status(self.settings.home, self._loaded, run_time)
            self._loaded.clear()


def _warn_unknown_isolated(names: tuple[str, ...], records: list[PluginRecord]) -> None:
    """A name in plugins.isolated that is not installed isolates nothing: say so."""
    from hermes_commons.sections import closest

    installed = sorted(record.name for record in records)
    for name in names:
        if name not in installed:
            near = closest(name, installed)
            log.warning(
                "plugins.isolated names %r, which is not installed%s",
                name,
                f"; did you mean {near!r}?" if near else "",
            )
