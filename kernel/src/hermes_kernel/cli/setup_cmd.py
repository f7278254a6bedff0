"""``hermes setup``: a short wizard for the provider, its key, the default model and the
terminal backend. Every question has a flag, so it also runs unattended (``--yes``)."""

from __future__ import annotations

import sys

import click

from hermes_kernel.cli.main import app_of


@click.command()
@click.option("--provider", metavar="NAME", help="The provider (see: hermes model).")
@click.option("--model", "model_name", metavar="NAME", help="The default model.")
@click.option(
    "--api-key-stdin", is_flag=True, help="Read the provider's API key from stdin (one line)."
)
@click.option("--backend", metavar="NAME", help="The terminal backend tools use (local, ...).")
@click.option(
    "-y", "--yes", "unattended", is_flag=True, help="Ask nothing; use flags and defaults."
)
@click.pass_context
def setup(
    ctx: click.Context,
    provider: str | None,
    model_name: str | None,
    api_key_stdin: bool,
    backend: str | None,
    unattended: bool,
) -> None:
    """Choose a provider, store its key in .env (mode 0600), and pick the default model
    and terminal backend. Keys never go into config.yaml."""
    from hermes_kernel.config.edit import set_model
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.config.settings import dotenv_path
    from hermes_kernel.providers.routing import NoModel, routing_view
    from hermes_sdk import Kind
    from hermes_sdk.dotenv import DotenvError, set_dotenv_value

    app = app_of(ctx)
    asks = not unattended and sys.stdin.isatty()
    try:
        endpoints = routing_view(app.host, app.settings).endpoints
    except NoModel as exc:
        raise click.ClickException(str(exc)) from None
    if not endpoints:
        raise click.ClickException("no provider plugin is installed: nothing to set up")
    names = sorted(endpoints)
    if provider is None:
        if not asks:
            raise click.UsageError(
                "--provider is needed with --yes (one of: " + ", ".join(names) + ")"
            )
        click.echo("Providers: " + ", ".join(names))
        provider = click.prompt("Provider", type=click.Choice(names), show_choices=False)
    if provider not in endpoints:
        raise click.UsageError(f"unknown provider {provider!r}; known: {', '.join(names)}")
    endpoint = endpoints[provider]

    key: str | None = None
    if api_key_stdin:
        if sys.stdin.isatty():  # typed into a terminal, the key would be echoed
            key = click.prompt(endpoint.api_key_env or "API key", hide_input=True).strip()
        else:
            key = sys.stdin.readline().strip()
        if not key:
            raise click.UsageError("--api-key-stdin read an empty line")
    elif endpoint.api_key_env and asks:
        have = app.settings.secrets.get(endpoint.api_key_env)
        hint = " (Enter keeps the one set)" if have else ""
        key = (
            click.prompt(
                f"{endpoint.api_key_env}{hint}", default="", hide_input=True, show_default=False
            ).strip()
            or None
        )
    if key is not None:
        if not endpoint.api_key_env:
            raise click.UsageError(f"provider {provider!r} takes no API key")
        try:
            set_dotenv_value(dotenv_path(app.settings.home), endpoint.api_key_env, key)
        except DotenvError as exc:
            raise ConfigError(exc.problems) from None

    if model_name is None and asks:
        choices = ", ".join(endpoint.models)
        if choices:
            click.echo(f"Models: {choices}")
        model_name = click.prompt("Default model", default=endpoint.default_model or "") or None

    backends = sorted(app.host.declared(Kind.BACKEND)) or ["local"]
    if backend is None and asks and len(backends) > 1:
        backend = click.prompt("Terminal backend", type=click.Choice(backends), default=backends[0])
    if backend is not None and backend not in backends:
        raise click.UsageError(f"unknown backend {backend!r}; installed: {', '.join(backends)}")
    section = app.settings.raw.get("model")
    previous = section if isinstance(section, dict) else {}
    # A new provider's models differ: its own default applies unless one was chosen. The
    # same provider (a key rotated) keeps the model configured.
    keep_model = model_name is None and previous.get("provider") == provider

    set_model(
        app.settings.config_path, provider, model_name, keep_model=keep_model, backend=backend
    )
    chosen = model_name or (previous.get("default") if keep_model else None)
    summary = f"provider {provider}, model {chosen or endpoint.default_model or 'default'}"
    if backend:
        summary += f", backend {backend}"
    if key is not None:
        summary += f"; key saved as {endpoint.api_key_env} in .env"
    click.echo(f"Saved: {summary}.")
    click.echo("Check it: hermes model test; then: hermes chat")
