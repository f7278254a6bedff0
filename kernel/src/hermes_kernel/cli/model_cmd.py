"""``hermes model``: which model Hermes uses, why, and whether it answers."""

from __future__ import annotations

import json
from typing import Any

import click

from hermes_kernel.cli.main import HermesGroup, app_of

_provider_option = click.option(
    "--provider", metavar="NAME", help="Use this provider (strict: no fallback)."
)
_model_option = click.option("--model", metavar="NAME", help="Use this model (strict).")


@click.group(cls=HermesGroup, invoke_without_command=True)
@click.option("--explain", is_flag=True, help="Show each step of the choice and what it saw.")
@_provider_option
@_model_option
@click.pass_context
def model(ctx: click.Context, explain: bool, provider: str | None, model: str | None) -> None:
    """Show the model in use and the providers you can choose from.

    The model router (a plugin) picks one; --explain shows what it looked at, in order.
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_kernel.providers.routing import NoModel, routing_view

    app = app_of(ctx)
    try:
        report = routing_view(app.host, app.settings, provider, model)
    except NoModel as exc:
        raise click.ClickException(str(exc)) from None
    if explain:
        click.echo("How the model is chosen (in order):")
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
                key = "key set" if app.settings.secrets.get(endpoint.api_key_env) else "no key"
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
@click.pass_context
def set_default(ctx: click.Context, provider: str, model_name: str | None) -> None:
    """Make PROVIDER (and MODEL) the default in config.yaml; "auto" lets the router pick."""
    from hermes_kernel.config.edit import set_model
    from hermes_kernel.providers.routing import NoModel, routing_view

    app = app_of(ctx)
    if provider != "auto":
        try:
            endpoints = routing_view(app.host, app.settings).endpoints
        except NoModel as exc:
            raise click.ClickException(str(exc)) from None
        if provider not in endpoints:
            known = ", ".join(sorted(endpoints)) or "none"
            raise click.UsageError(f"unknown provider {provider!r}; known: {known}")

    set_model(app.settings.config_path, provider, model_name)
    click.echo(
        f"model.provider = {provider}" + (f", model.default = {model_name}" if model_name else "")
    )


@model.command("test")
@_provider_option
@_model_option
@click.option("--prompt", default="Say hello in five words.", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def test(
    ctx: click.Context, provider: str | None, model: str | None, prompt: str, as_json: bool
) -> None:
    """Send one request to the model in use and report latency and usage."""
    import asyncio
    import time

    from hermes_kernel.providers.routing import NoModel, model_setup, pricing
    from hermes_sdk.models import ChatMessage, ModelRequest, ProviderError

    app = app_of(ctx)
    try:
        setup = model_setup(app.host, app.settings, provider, model)
    except NoModel as exc:
        raise click.ClickException(str(exc)) from None
    route = setup.routes[0]
    first_token: list[float] = []

    def on_text(_text: str) -> None:
        if not first_token:
            first_token.append(time.perf_counter())

    async def ask() -> Any:
        request = ModelRequest(route.model, (ChatMessage("user", prompt),), max_tokens=64)
        try:
            return await route.provider.complete(request, on_text)
        finally:
            await route.provider.aclose()

    started = time.perf_counter()
    try:
        response = asyncio.run(ask())
    except ProviderError as exc:
        raise click.ClickException(f"{route.name} / {route.model}: {exc}") from None
    elapsed = time.perf_counter() - started
    usage = response.usage
    cost = pricing(app.host)(route.model, usage)
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
