"""The environment commands start with: an allow-list, never Hermes' own environment.

Provider keys and other secrets live in Hermes' process (from .env or the shell that
started it); a tool's subprocess gets only what is listed here plus what the user passes
through by name (``terminal.env_passthrough``). A passthrough that names a key Hermes
itself uses is refused: provider keys never reach a tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hermes_commons.redact import is_secret_key

__all__ = [
    "ALLOWED_VARIABLES",
    "INSIDE_AGENT",
    "command_environment",
    "secret_environment_values",
]

INSIDE_AGENT = "HERMES_INSIDE_AGENT"
"""Set in every command's environment: a ``hermes`` started there knows an agent's tool
started it, and takes no more power than its parent had (no ``--yolo``, no approvals off)."""

ALLOWED_VARIABLES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "TZ",
        "TMPDIR",
        "PWD",
        "XDG_RUNTIME_DIR",
    }
)


def command_environment(
    environ: Mapping[str, str],
    passthrough: Iterable[str] = (),
    reserved: Iterable[str] = (),
) -> tuple[dict[str, str], list[str]]:
    """(the environment for commands, warnings about refused passthrough names).

    ``reserved`` names variables Hermes itself reads secrets from (the .env keys, the
    providers' ``api_key_env``): those never pass through.
    """
    reserved_names = set(reserved)
    env = {
        name: value
        for name, value in environ.items()
        if name in ALLOWED_VARIABLES or name.startswith("LC_")
    }
    env[INSIDE_AGENT] = "1"
    warnings = []
    for name in passthrough:
        if name in reserved_names:
            warnings.append(
                f"terminal.env_passthrough: {name} holds a key Hermes uses; it is not passed "
                "to commands"
            )
        elif name in environ:
            env[name] = environ[name]
    return env, warnings


def secret_environment_values(environ: Mapping[str, str]) -> list[str]:
    """Values of variables whose names say they are secret (``*_TOKEN``, ``*_KEY``,
    ``*_KEYS`` (each of its comma-separated keys) ...): redacted from tool output and logs
    even when they did not come from .env."""
    values = []
    for name, value in environ.items():
        if not value:
            continue
        if name.upper().endswith("_KEYS"):  # a list of keys (NAME_KEYS=a,b): each one
            values += [part.strip() for part in value.split(",") if part.strip()]
        elif is_secret_key(name) or name.upper().endswith("_KEY"):
            values.append(value)
    return values
