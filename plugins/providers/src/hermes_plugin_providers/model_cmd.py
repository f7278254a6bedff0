"""``hermes model``: which model Hermes uses, why, and whether it answers."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import click

from hermes_plugin_providers.command import command_context, here_request
from hermes_plugin_providers.routes import LadderRouter, endpoint_needs, run_ladder
from hermes_sdk.routing import RouteRequest

_provider_option = click.option(
    "--provider", metavar="NAME", help="Use this provider (strict: no fallback)."
)
_model_option = click.option("--model", metavar="NAME", help="Use this model (strict).")


@click.group(invoke_without_command=True)
@click.option("--explain", is_flag=True, help="Show every rung of the ladder and what it saw.")
@_provider_option
@_model_option
@click.pass_context
def model(ctx: click.Context, explain: bool, provider: str | None, model: str | None) -> None:
    """Show the model in use and the providers you can choose from.

    The provider ladder picks one: --provider/--model, then model.provider in config (a
    custom provider from providers:), model.base_url, credential_pools, API keys in the
    environment or .env, and last the embedded offline model.
    """
    if ctx.invoked_subcommand is not None:
        return
    request = here_request(provider, model)
    report = LadderRouter().view(request)
    if explain:
        click.echo("Provider ladder (lowest position first):")
        for line in report.explanation:
            click.echo(f"  {line}")
        click.echo("")
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    if report.choice is not None:
        choice = report.choice
        strict = " (strict: chosen on the command line)" if report.strict else ""
        click.echo(f"In use: {choice.endpoint.name} / {choice.model}{strict}")
        click.echo(f"  from: {choice.source}")
        if choice.endpoint.notice:
            click.echo(f"  note: {choice.endpoint.notice}")
    else:
        click.echo(f"In use: none: {report.failure}")
    if not explain:
        click.echo("")
        click.echo("Providers:")
        chosen = report.choice.endpoint.name if report.choice else None
        for name, endpoint in sorted(report.endpoints.items()):
            mark = "*" if name == chosen else " "
            needs, models = endpoint_needs(endpoint, request.secret)
            click.echo(f" {mark} {name:<16} {needs:<34} models: {models}")
        click.echo("")
        click.echo(
            "Set the default: hermes model set PROVIDER [MODEL]; why: hermes model --explain"
        )
    if report.choice is None:
        ctx.exit(1)


@model.command("set")
@click.argument("provider")
@click.argument("model_name", metavar="[MODEL]", required=False)
def set_default(provider: str, model_name: str | None) -> None:
    """Make PROVIDER (and MODEL) the default in config.yaml; "auto" lets the ladder pick."""
    if provider != "auto":
        _report, ladder = run_ladder(here_request())
        if provider not in ladder.endpoints:
            known = ", ".join(sorted(ladder.endpoints)) or "none"
            raise click.UsageError(f"unknown provider {provider!r}; known: {known}")
    edit = command_context().edit_config
    if edit is None:
        raise click.ClickException("this Hermes cannot change config.yaml from a plugin")

    def change(document: MutableMapping[str, Any]) -> None:
        section = document.get("model")
        if not isinstance(section, MutableMapping):  # absent, or the "model: NAME" shorthand
            section = document["model"] = {}
        section["provider"] = provider
        if model_name:
            section["default"] = model_name
        else:
            section.pop("default", None)  # the provider's own default applies

    edit(change)
    click.echo(
        f"model.provider = {provider}" + (f", model.default = {model_name}" if model_name else "")
    )


@model.command("pick")
@click.argument("provider", required=False)
@click.argument("model_name", metavar="[MODEL]", required=False)
@click.option(
    "--api-key-stdin", is_flag=True, help="Read the provider's API key from stdin (one line)."
)
def pick(provider: str | None, model_name: str | None, api_key_stdin: bool) -> None:
    """Choose the provider and model from a numbered list of the known ones (the presets
    among them), and store its key; PROVIDER [MODEL] chooses without asking."""
    from hermes_plugin_providers.choosing import known_provider_changes

    asks = provider is None
    _report, ladder = run_ladder(here_request())
    endpoints = ladder.endpoints
    names = sorted(name for name in endpoints if name != "local-endpoint")
    if provider is None:
        secrets = command_context().secrets
        for number, name in enumerate(names, 1):
            needs = endpoints[name].api_key_env
            names_of = (needs, *endpoints[name].other_key_envs) if needs else ()
            have = any(secrets.get(variable) for variable in names_of)
            state = f"{needs} ({'set' if have else 'not set'})" if needs else ""
            shown = ", ".join(endpoints[name].models[:3]) or endpoints[name].default_model
            click.echo(f"{number:>3}  {name:<16} {state:<36} {shown}")
        provider = _chosen(click.prompt("Provider (number or name)").strip(), names)
    if provider not in endpoints:
        raise click.UsageError(f"unknown provider {provider!r}; known: {', '.join(names)}")
    endpoint = endpoints[provider]
    if model_name is None and asks and endpoint.models:
        for number, name in enumerate(endpoint.models, 1):
            click.echo(f"{number:>3}  {name}")
        answer = click.prompt("Model (number or name)", default="1").strip()
        model_name = _chosen(answer, list(endpoint.models))
    summary, warning, apply = known_provider_changes(endpoint, model_name, api_key_stdin, asks)
    edit = command_context().edit_config
    if edit is None:
        raise click.ClickException("this Hermes cannot change config.yaml from a plugin")
    edit(apply)
    click.echo(f"Saved: {summary}.")
    if warning:
        click.echo(f"warning: {warning}", err=True)


def _chosen(answer: str, names: list[str]) -> str:
    """A numbered list's answer: its number or the name itself."""
    if answer.isdigit() and 1 <= int(answer) <= len(names):
        return names[int(answer) - 1]
    return answer


@model.command("test")
@_provider_option
@_model_option
@click.option("--prompt", default="Say hello in five words.", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def test(provider: str | None, model: str | None, prompt: str, as_json: bool) -> None:
    """Send one request to the model in use and report latency and usage."""
    ask_once(here_request(provider, model), prompt, as_json)


def ask_once(request: RouteRequest, prompt: str, as_json: bool = False) -> None:
    """One request to the route ``request`` resolves to, reported; ClickException (with the
    fix) when it fails."""
    import asyncio

    from hermes_plugin_providers.timed_request import ModelTestFailed, measure

    try:
        result = asyncio.run(measure(request, prompt))
    except ModelTestFailed as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(
        f"{result['provider']} / {result['model']}: answered in {result['latency_s']:.2f} s",
        nl=False,
    )
    if result["first_token_s"] is not None:
        click.echo(f" (first token after {result['first_token_s']:.2f} s)")
    else:
        click.echo("")
    cost = result["cost_usd"]
    click.echo(
        f"usage: {result['input_tokens']} in, {result['output_tokens']} out, "
        f"{result['cache_read_tokens']} cache read, {result['cache_write_tokens']} cache write; "
        f"cost: {'unknown' if cost is None else f'${cost:.6f}'}"
    )
    click.echo(f"reply: {result['reply'].strip()[:200]}")
