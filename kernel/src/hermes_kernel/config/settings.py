"""Assemble the effective settings: flags > config.yaml > .env > defaults.

config.yaml holds behaviour and .env holds secrets; the two never overlap, so precedence
between them only matters for a secret named in both the process environment and .env
(the environment wins, as with every dotenv tool).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_commons.dotenv import DotenvError, read_dotenv
from hermes_kernel.config.cache import content_key, read_cached, write_cached
from hermes_kernel.config.controls import PluginSettings
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.home import resolve_home
from hermes_kernel.config.yaml_source import YamlDocument


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

    def merged(self) -> dict[str, str]:
        """.env with the environment over it: what a plugin gets to read its keys from."""
        return {**self.dotenv, **{name: value for name, value in self.environ.items() if value}}

    def values(self) -> list[str]:
        """Every secret value from .env (the environment's are not all secrets); a list of
        keys (``NAME_KEYS=a,b``) counts as each of its keys too."""
        values = [value for value in self.dotenv.values() if value]
        for name, value in self.dotenv.items():
            if name.upper().endswith("_KEYS"):
                values += [part.strip() for part in value.split(",") if part.strip()]
        return values


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know about where state is and how to behave."""

    home: Path
    flags: Flags
    document: YamlDocument
    plugins: PluginSettings
    secrets: Secrets
    environ: Mapping[str, str]
    warnings: list[str] = field(default_factory=list)
    unknown_keys: list[tuple[str, str]] = field(default_factory=list)
    """Each key of config.yaml nothing knows (ignored), as (finding, fix)."""
    misspelled_safety: list[str] = field(default_factory=list)
    """One line per unknown key in a safety section (``approvals:``): a misspelled
    ``deny`` would silently not apply, so what runs tools refuses to start (fails closed)."""

    @property
    def config_path(self) -> Path:
        return config_path(self.home)

    @property
    def raw(self) -> dict[str, Any]:
        return self.document.data

    @property
    def strict_plugins(self) -> bool:
        env = self.environ.get("HERMES_STRICT_PLUGINS", "").strip().lower()
        return self.flags.strict_plugins or env in {"1", "true", "yes"} or self.plugins.strict


def config_path(home: Path) -> Path:
    return home / "config.yaml"


def dotenv_path(home: Path) -> Path:
    return home / ".env"


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror}"]) from None


ParsedConfig = tuple[YamlDocument, PluginSettings, list[str], list[tuple[str, str]], list[str]]
"""The document (unknown keys left out), plugin controls, start-up warnings, each unknown
key as (finding, fix) for ``hermes doctor``, and the unknown keys of safety sections."""

SAFETY_SECTIONS = frozenset({"approvals"})
"""Sections where an unknown key fails closed (see ``Settings.misspelled_safety``)."""


def _parse_and_validate(path: Path, content: bytes) -> ParsedConfig:
    """The slow path: PyYAML and pydantic, imported only here."""
    from hermes_kernel.config.model import KernelConfig
    from hermes_kernel.config.validate import dotted, lenient_section, unknown_line
    from hermes_kernel.config.yaml_source import parse_yaml_mapping

    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None
    document = parse_yaml_mapping(path, text)
    kernel, problems, unknown, cleaned = lenient_section(document, (), KernelConfig, document.data)
    if kernel is None:
        raise ConfigError(problems)
    document = replace(document, data=cleaned)  # what reads a section never meets them
    warnings = [unknown_line(document, unknown)] if unknown else []
    findings = [(key.finding(document), key.fix()) for key in unknown]
    safety = [
        f"{document.where(key.key_path)}: {dotted(key.key_path)} is not a setting"
        + (f" (did you mean {key.meant!r}?)" if key.meant else "")
        + f", and Hermes runs no tools while a key of {key.key_path[0]}: is misspelled (a "
        "deny rule could silently not apply): fix it, then check with: hermes config validate"
        for key in unknown
        if key.key_path and key.key_path[0] in SAFETY_SECTIONS
    ]
    plugins = PluginSettings.from_mapping(kernel.plugins.model_dump())
    return document, plugins, warnings, findings, safety


def _load_config(home: Path) -> ParsedConfig:
    path = config_path(home)
    content = _read_bytes(path)
    if content is None:
        return YamlDocument(path, {}), PluginSettings(), [], [], []
    key = content_key(path, content)
    cached = read_cached(home, key)
    if cached is not None:
        try:
            document = YamlDocument.from_json(path, cached["document"])
            plugins = PluginSettings.from_mapping(cached["plugins"])
            unknown = [(str(finding), str(fix)) for finding, fix in cached["unknown"]]
            safety = [str(line) for line in cached["safety"]]
            return document, plugins, list(cached["warnings"]), unknown, safety
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a damaged (or older) cache entry is a miss
    document, plugins, warnings, unknown, safety = _parse_and_validate(path, content)
    write_cached(
        home,
        key,
        {
            "document": document.to_json(),
            "plugins": plugins.as_mapping(),
            "warnings": warnings,
            "unknown": [list(pair) for pair in unknown],  # JSON has no tuples
            "safety": safety,
        },
    )
    return document, plugins, warnings, unknown, safety


def load_document(home: Path) -> YamlDocument:
    """The home's config.yaml as validated (unknown keys dropped), through the cache; for what
    needs one section and has no Settings (a plugin's store opened by the home alone)."""
    return _load_config(home)[0]


def load_settings(flags: Flags, environ: Mapping[str, str] | None = None) -> Settings:
    """Read HERMES_HOME's config.yaml and .env; raise ConfigError listing every problem."""
    env = dict(os.environ if environ is None else environ)
    home = resolve_home(flags.home, flags.profile, env)
    problems: list[str] = []
    parsed: ParsedConfig = (YamlDocument(config_path(home), {}), PluginSettings(), [], [], [])
    try:
        parsed = _load_config(home)
    except ConfigError as exc:
        problems.extend(exc.problems)
    try:
        dotenv = read_dotenv(dotenv_path(home))
    except DotenvError as exc:
        problems.extend(exc.problems)
        dotenv = {}
    if problems:
        raise ConfigError(problems)
    document, plugins, warnings, unknown, safety = parsed
    return Settings(
        home=home,
        flags=flags,
        document=document,
        plugins=plugins,
        secrets=Secrets(dotenv, env),
        environ=env,
        warnings=warnings,
        unknown_keys=unknown,
        misspelled_safety=safety,
    )
