"""``hermes model``: which model Hermes uses, why, and whether it answers."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import click

from hermes_plugin_providers.command import command_context, here_request
from hermes_plugin_providers.routes import LadderRouter, model_routing, run_ladder
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
            if endpoint.api_key_env:
                key = "key set" if request.secret(endpoint.api_key_env) else "no key"
                needs = f"{endpoint.api_key_env} ({key})"
            else:
                needs = "no key needed"
            models = ", ".join(endpoint.models) or endpoint.default_model or "-"
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
    import time

    from hermes_sdk.models import ChatMessage, ModelRequest, ProviderError
    from hermes_sdk.routing import NoModel

    try:
        route = model_routing(request).routes[0]
    except NoModel as exc:
        raise click.ClickException(str(exc)) from None
    first_token: list[float] = []

    def on_text(_text: str) -> None:
        if not first_token:
            first_token.append(time.perf_counter())

    async def ask() -> Any:
        message = ModelRequest(route.model, (ChatMessage("user", prompt),), max_tokens=64)
        try:
            return await route.provider.complete(message, on_text)
        finally:
            await route.provider.aclose()

    started = time.perf_counter()
    try:
        response = asyncio.run(ask())
    except ProviderError as exc:
        fix = route.fix(exc) if route.fix is not None else None
        failure = exc.with_fix(fix) if fix else exc
        raise click.ClickException(f"{route.name} / {route.model}: {failure}") from None
    elapsed = time.perf_counter() - started
    usage = response.usage
    cost = LadderRouter().cost(request.provided)(route.model, usage)
    result = {
        "provider": route.name,
        "model": route.model,
        "latency_s": round(elapsed, 3),
        "first_token_s": round(first_token[0] - started, 3) if first_token else None,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": cost,
        "reply": response.content,
    }
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{route.name} / {route.model}: answered in {elapsed:.2f} s", nl=False)
    if first_token:
        click.echo(f" (first token after {first_token[0] - started:.2f} s)")
    else:
        click.echo("")
    click.echo(
        f"usage: {usage.input_tokens} in, {usage.output_tokens} out, "
        f"{usage.cache_read_tokens} cache read, {usage.cache_write_tokens} cache write; "
        f"cost: {'unknown' if cost is None else f'${cost:.6f}'}"
    )
    click.echo(f"reply: {response.content.strip()[:200]}")
