"""Assemble the effective settings: flags > config.yaml > .env > defaults.

config.yaml holds behaviour and .env holds secrets; the two never overlap, so precedence
between them only matters for a secret named in both the process environment and .env
(the environment wins, as with every dotenv tool).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_kernel.config.dotenv import read_dotenv
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.model import KernelConfig
from hermes_kernel.config.validate import unknown_keys, validate_section
from hermes_kernel.config.yaml_source import YamlDocument, read_yaml_mapping
from hermes_kernel.home import resolve_home


@dataclass(frozen=True)
class Flags:
    """Global command-line flags; they override everything else."""

    home: Path | None = None
    profile: str | None = None
    safe_mode: bool = False
    strict_plugins: bool = False
    verbose: bool = False


@dataclass(frozen=True)
class Secrets:
    """Secret values from the environment and .env; the environment wins."""

    dotenv: Mapping[str, str]
    environ: Mapping[str, str]

    def get(self, name: str) -> str | None:
        return self.environ.get(name) or self.dotenv.get(name)

    def values(self) -> list[str]:
        """Every secret value from .env (the environment's are not all secrets)."""
        return [value for value in self.dotenv.values() if value]


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know about where state is and how to behave."""

    home: Path
    flags: Flags
    document: YamlDocument
    kernel: KernelConfig
    secrets: Secrets
    environ: Mapping[str, str]
    warnings: list[str] = field(default_factory=list)

    @property
    def config_path(self) -> Path:
        return config_path(self.home)

    @property
    def raw(self) -> dict[str, Any]:
        return self.document.data

    @property
    def strict_plugins(self) -> bool:
        env = self.environ.get("HERMES_STRICT_PLUGINS", "").strip().lower()
        return (
            self.flags.strict_plugins or env in {"1", "true", "yes"} or self.kernel.plugins.strict
        )


def config_path(home: Path) -> Path:
    return home / "config.yaml"


def dotenv_path(home: Path) -> Path:
    return home / ".env"


def load_settings(flags: Flags, environ: Mapping[str, str] | None = None) -> Settings:
    """Read HERMES_HOME's config.yaml and .env; raise ConfigError listing every problem."""
    env = dict(os.environ if environ is None else environ)
    home = resolve_home(flags.home, flags.profile, env)
    problems: list[str] = []
    try:
        document = read_yaml_mapping(config_path(home))
    except ConfigError as exc:
        problems.extend(exc.problems)
        document = YamlDocument(config_path(home), {})
    kernel, kernel_problems = validate_section(document, (), KernelConfig, document.data)
    problems.extend(kernel_problems)
    try:
        dotenv = read_dotenv(dotenv_path(home))
    except ConfigError as exc:
        problems.extend(exc.problems)
        dotenv = {}
    if problems or kernel is None:
        raise ConfigError(problems)
    warnings = unknown_keys(document, ("plugins",), kernel.plugins)
    return Settings(
        home=home,
        flags=flags,
        document=document,
        kernel=kernel,
        secrets=Secrets(dotenv, env),
        environ=env,
        warnings=warnings,
    )
