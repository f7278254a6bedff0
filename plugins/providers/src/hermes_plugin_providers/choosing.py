"""Choosing a known provider: its key read (hidden, or from stdin) and stored in .env, its
default model asked, and the change to config.yaml; shared by ``hermes setup`` and
``hermes model pick``."""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import click

from hermes_plugin_providers.command import command_context
from hermes_sdk.ladder import Endpoint


def save_key(variable: str, key: str) -> None:
    from hermes_commons.dotenv import DotenvError, set_dotenv_value

    try:
        set_dotenv_value(Path(command_context().home) / ".env", variable, key)
    except DotenvError as exc:
        raise click.ClickException("; ".join(exc.problems)) from None


def read_key(prompt: str, from_stdin: bool, asks: bool) -> str | None:
    if from_stdin:
        if sys.stdin.isatty():  # typed into a terminal, the key would be echoed
            key = click.prompt(prompt, hide_input=True).strip()
        else:
            key = sys.stdin.readline().strip()
        if not key:
            raise click.UsageError("--api-key-stdin read an empty line")
        return key
    if not asks:
        return None
    return click.prompt(prompt, default="", hide_input=True, show_default=False).strip() or None


def model_section(document: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    section = document.get("model")
    if not isinstance(section, MutableMapping):  # absent, or the "model: NAME" shorthand
        section = document["model"] = {}
    return section


Changes = tuple[str, str, Any]
"""What was chosen (for the summary), a warning (or ""), and the change to config.yaml."""


def known_provider_changes(
    endpoint: Endpoint, model_name: str | None, api_key_stdin: bool, asks: bool
) -> Changes:
    context = command_context()
    provider = endpoint.name
    variable = endpoint.api_key_env
    have = any(context.secrets.get(name) for name in (variable, *endpoint.other_key_envs) if name)
    key = None
    if variable:
        hint = " (Enter keeps the one set)" if have else " (Enter for none)"
        key = read_key(f"{variable}{hint}", api_key_stdin, asks)
    elif api_key_stdin:
        raise click.UsageError(f"provider {provider!r} takes no API key")
    if key is not None and variable:
        save_key(variable, key)
    if model_name is None and asks:
        if endpoint.models:
            click.echo(f"Models: {', '.join(endpoint.models)}")
        model_name = click.prompt("Default model", default=endpoint.default_model or "") or None
    previous = context.config.get("model")
    same = isinstance(previous, dict) and previous.get("provider") == provider

    def apply(document: MutableMapping[str, Any]) -> None:
        section = model_section(document)
        section["provider"] = provider
        for stale in ("base_url", "api_key_env"):  # a server of your own is no longer used
            section.pop(stale, None)
        if model_name:
            section["default"] = model_name
        elif not same:  # a new provider's models differ: its own default applies
            section.pop("default", None)

    chosen = model_name or (previous.get("default") if same and previous else None)
    summary = f"provider {provider}, model {chosen or endpoint.default_model or 'default'}"
    if key is not None:
        summary += f", key saved as {variable} in .env"
    warning = ""
    if variable and key is None and not have:
        warning = (
            f"no key is stored in {variable}, so {provider} cannot answer yet: put it in "
            f"{Path(context.home) / '.env'}, or run hermes setup --provider {provider} "
            "--api-key-stdin"
        )
    return summary, warning, apply
