"""``hermes setup``: a short wizard for the provider (a known one, or a model server of your
own at a URL), its key, the default model and the terminal backend, ending with a test
request. Every question has a flag, so it also runs unattended (``--yes``). Keys go to .env
(mode 0600), never into config.yaml."""

from __future__ import annotations

import copy
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import click

from hermes_plugin_providers.choosing import (
    Changes,
    known_provider_changes,
    model_section,
    read_key,
    save_key,
)
from hermes_plugin_providers.command import command_context, here_request
from hermes_plugin_providers.routes import run_ladder
from hermes_sdk import Kind

CUSTOM_KEY_VARIABLE = "MODEL_API_KEY"
"""Where the key of a model server of your own is kept (``model.api_key_env`` names it)."""
DEFAULT_BACKEND = "local"
"""The backend Enter chooses: commands run on this machine, which needs nothing running."""
MODELS_SECONDS = 5.0


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _server_models(base_url: str, key: str | None) -> tuple[list[str], str]:
    """The models a server lists at ``/models`` (OpenAI-compatible), or why none came."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = httpx.get(
            f"{base_url.rstrip('/')}/models", headers=headers, timeout=MODELS_SECONDS
        )
        response.raise_for_status()
        data = response.json().get("data") or []
        return sorted(
            str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")
        ), ""
    except (httpx.HTTPError, ValueError, AttributeError, TypeError) as exc:
        return [], " ".join(str(exc).split())[:160] or type(exc).__name__


def _backends() -> list[str]:
    context = command_context()
    names = sorted(spec.name for spec in context.provided.of(Kind.BACKEND))
    return names or [DEFAULT_BACKEND]


@click.command()
@click.option("--provider", metavar="NAME", help="A known provider (see: hermes model).")
@click.option(
    "--base-url",
    metavar="URL",
    help="Your own OpenAI-compatible model server instead (http://host:port/v1).",
)
@click.option("--model", "model_name", metavar="NAME", help="The default model.")
@click.option(
    "--api-key-stdin", is_flag=True, help="Read the provider's API key from stdin (one line)."
)
@click.option("--backend", metavar="NAME", help="Where tools run commands (default: local).")
@click.option(
    "--test/--no-test",
    "test_it",
    default=None,
    help="Send the model one request at the end (asked when interactive; off with --yes).",
)
@click.option(
    "-y", "--yes", "unattended", is_flag=True, help="Ask nothing; use flags and defaults."
)
def setup(
    provider: str | None,
    base_url: str | None,
    model_name: str | None,
    api_key_stdin: bool,
    backend: str | None,
    test_it: bool | None,
    unattended: bool,
) -> None:
    """Choose a provider (or a model server of your own), store its key in .env, and pick
    the default model and the terminal backend; then try it."""
    context = command_context()
    asks = not unattended and sys.stdin.isatty()
    _report, ladder = run_ladder(here_request())
    endpoints = ladder.endpoints
    names = sorted(name for name in endpoints if name != "local-endpoint")
    if provider is None and base_url is None:
        if not asks:
            raise click.UsageError(
                "--provider or --base-url is needed with --yes (one of: "
                + ", ".join(names)
                + ", or a URL)"
            )
        click.echo("Providers: " + ", ".join(names) + ", or the URL of your own server")
        answer = click.prompt("Provider").strip()
        if _is_url(answer):
            base_url = answer
        else:
            provider = answer
    if base_url is not None:
        if not _is_url(base_url):
            raise click.UsageError(f"--base-url: {base_url!r} is not an http:// or https:// URL")
        changes = _own_server(base_url, model_name, api_key_stdin, asks)
    else:
        assert provider is not None
        if provider not in endpoints:
            raise click.UsageError(
                f"unknown provider {provider!r}; known: {', '.join(names)}, or a URL "
                "(--base-url) for your own server"
            )
        changes = known_provider_changes(endpoints[provider], model_name, api_key_stdin, asks)

    backends = _backends()
    if backend is None:
        default = DEFAULT_BACKEND if DEFAULT_BACKEND in backends else backends[0]
        if asks and len(backends) > 1:
            shown = ", ".join(f"{b} (default)" if b == default else b for b in backends)
            click.echo(f"Terminal backends (where tools run commands): {shown}")
            backend = click.prompt(
                "Terminal backend", type=click.Choice(backends), default=default, show_choices=False
            )
        else:
            backend = default
    if backend not in backends:
        raise click.UsageError(f"unknown backend {backend!r}; installed: {', '.join(backends)}")

    edit = context.edit_config
    if edit is None:
        raise click.ClickException("this Hermes cannot change config.yaml from a plugin")
    summary, warning, apply = changes

    def change(document: MutableMapping[str, Any]) -> None:
        apply(document)
        agent = document.get("agent")
        if not isinstance(agent, MutableMapping):
            agent = document["agent"] = {}
        agent["backend"] = backend

    edit(change)
    click.echo(f"Saved: {summary}, terminal backend {backend}.")
    if warning:
        click.echo(f"warning: {warning}", err=True)
    if test_it is None:
        test_it = asks and click.confirm("Test it now?", default=True)
    if not test_it:
        click.echo("Check it: hermes doctor --online; then: hermes chat")
        return
    saved = copy.deepcopy(dict(context.config))  # config.yaml as it is now, in memory
    change(saved)
    _test(saved)


def _own_server(base_url: str, model_name: str | None, api_key_stdin: bool, asks: bool) -> Changes:
    context = command_context()
    have = bool(context.secrets.get(CUSTOM_KEY_VARIABLE))
    hint = " (Enter keeps the one set)" if have else " (Enter if the server needs none)"
    key = read_key(f"API key for {base_url}{hint}", api_key_stdin, asks)
    if key is not None:
        save_key(CUSTOM_KEY_VARIABLE, key)
    models, why = _server_models(base_url, key or context.secrets.get(CUSTOM_KEY_VARIABLE))
    if models:
        click.echo(f"The server offers: {', '.join(models)}")
    else:
        click.echo(f"The server listed no models ({why or 'an empty list'})", err=True)
    if model_name is None:
        if asks:
            model_name = click.prompt("Default model", default=models[0] if models else "")
        elif models:
            model_name = models[0]
    if not model_name:
        raise click.UsageError("no model: give --model NAME (the server listed none)")
    keyed = key is not None or have

    def apply(document: MutableMapping[str, Any]) -> None:
        section = model_section(document)
        section.pop("provider", None)  # the server of your own is the model.base_url rung
        section["base_url"] = base_url
        section["default"] = model_name
        if keyed:
            section["api_key_env"] = CUSTOM_KEY_VARIABLE
        else:
            section.pop("api_key_env", None)

    summary = f"your server {base_url}, model {model_name}"
    if key is not None:
        summary += f", key saved as {CUSTOM_KEY_VARIABLE} in .env"
    warning = (
        ""
        if models
        else f"{base_url} did not list its models: check the URL (it usually ends in /v1)"
    )
    return summary, warning, apply


def _test(config: MutableMapping[str, Any]) -> None:
    """``hermes model test`` on what was just saved, as the last step: a failure says what
    fixes it, and the command exits 1."""
    import functools

    from hermes_commons.dotenv import current_secret
    from hermes_plugin_providers.model_cmd import ask_once
    from hermes_plugin_providers.routes import route_request

    context = command_context()
    fresh = functools.partial(current_secret, Path(context.home) / ".env")  # the new key too
    request = route_request(context.home, config, fresh, context.provided)
    click.echo("Testing: one short request to the model ...")
    try:
        ask_once(request, "Say hello in five words.")
    except click.ClickException as exc:
        click.echo(f"The test failed: {exc.format_message()}", err=True)
        click.echo("Fix it, then: hermes model test", err=True)
        raise SystemExit(1) from None
    click.echo("It works. Next: hermes chat")
