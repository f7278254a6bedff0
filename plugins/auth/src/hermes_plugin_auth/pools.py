"""``hermes auth``: each sign-in's status, and the credential pools (keys, and the accounts of
a sign-in). Nothing here prints a token: status says when a sign-in expires and whether it
renews itself, never what it is."""

from __future__ import annotations

import sys
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import click

from hermes_plugin_auth.commands import (
    changing,
    command_context,
    keep_account,
    parse_account,
    sign_in,
    sign_in_options,
)
from hermes_plugin_auth.services import ALIASES, BY_NAME, SERVICES
from hermes_plugin_auth.store import AuthStore, accounts_of
from hermes_sdk import Kind
from hermes_sdk.events import CommandContext
from hermes_sdk.specs import RungSpec


@click.group()
def auth() -> None:
    """Sign-ins and credential pools."""


def _when(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@auth.command("status")
def status() -> None:
    """Each sign-in: where, until when, whether it renews itself (never the token)."""
    store = AuthStore(command_context().home)
    problem = store.problem()
    if problem:
        click.echo(f"warning: {problem}", err=True)
    sign_ins = store.sign_ins()
    if not sign_ins:
        click.echo("No sign-ins. Sign in: hermes login PROVIDER (" + ", ".join(BY_NAME) + ")")
        return
    now = time.time()
    for name, entry in sorted(sign_ins.items()):
        service = BY_NAME.get(str(entry.get("service") or name.partition("#")[0]))
        label = service.label if service else name
        expires_at = (entry.get("exchanged") or {}).get("expires_at") or entry.get("expires_at")
        if expires_at is None:
            when = "no expiry stated"
        elif float(expires_at) > now:
            when = f"token good for {_when(float(expires_at) - now)}"
        else:
            when = "token expired"
        renews = (
            "renews itself"
            if entry.get("refresh_token") or entry.get("exchanged")
            else ("sign in again when it expires")
        )
        issuer = entry.get("issuer", "?")
        click.echo(f"{name:<16} {label}: signed in at {issuer}; {when}; {renews}")


def _pools(context: CommandContext) -> dict[str, list[str]]:
    raw = context.config.get("credential_pools") or {}
    return (
        {str(k): [str(v) for v in names] for k, names in raw.items()}
        if isinstance(raw, dict)
        else {}
    )


@auth.command("list")
def list_credentials() -> None:
    """Each credential of each pool, with how it is doing (ok, cooling down, exhausted),
    and each sign-in (several accounts of one service are a pool too)."""
    from hermes_commons.credential_states import states

    context = command_context()
    known = states(context.home)
    pools = _pools(context)
    now = time.time()

    def shown(endpoint: str, name: str) -> str:
        state = (known.get(endpoint) or {}).get(name)
        if not state:
            return "ok"
        left = _when(float(state["until"]) - now)
        return f"{state['state']}, {left} left ({state.get('reason', '?')})"

    for endpoint, names in sorted(pools.items()):
        click.echo(f"{endpoint} (pool of {len(names)})")
        for variable in names:
            said = shown(endpoint, variable) if context.secrets.get(variable) else "not set"
            click.echo(f"  {variable:<28} {said}")
    sign_ins = AuthStore(context.home).sign_ins()
    for service in SERVICES:
        accounts = accounts_of(sign_ins, service.name)
        if accounts:
            many = f"{len(accounts)} sign-ins" if len(accounts) > 1 else "sign-in"
            click.echo(f"{service.name} ({many}; hermes auth status)")
            for key, _entry in accounts:
                click.echo(f"  {key:<28} {shown(service.name, key)}")
    if not pools and not sign_ins:
        click.echo("No pools and no sign-ins: hermes auth add PROVIDER; hermes login PROVIDER")


def _endpoint_key(context: CommandContext, provider: str) -> tuple[bool, str | None]:
    """Whether ``provider`` is a known endpoint, and the variable its own key is read from
    (as its rung or its ``providers:`` entry names it)."""
    custom = (context.config.get("providers") or {}).get(provider)
    if isinstance(custom, dict):
        return True, custom.get("api_key_env")
    for spec in context.provided.of(Kind.RUNG):
        endpoint = spec.endpoint if isinstance(spec, RungSpec) else None
        if endpoint is not None and endpoint.name == provider:
            return True, endpoint.api_key_env
    return False, None


def _edit(change: Any) -> None:
    edit = command_context().edit_config
    if edit is None:
        raise click.ClickException("this Hermes cannot change config.yaml from a plugin")
    edit(change)


@auth.command("add")
@click.argument("provider")
@click.option("--api-key-stdin", is_flag=True, help="Read the key from stdin (one line).")
@sign_in_options
def add(
    provider: str,
    api_key_stdin: bool,
    issuer: str | None,
    base_url: str | None,
    region: str | None,
    no_browser: bool,
) -> None:
    """Add an API key to PROVIDER's pool (keys rotate on rate limits and billing errors). The
    key goes to .env under a variable of its own; config.yaml names the variable. For a
    sign-in (codex, copilot, nous, xai-oauth, qwen-oauth, minimax-oauth), sign in another
    account instead: the accounts rotate as keys do."""
    from hermes_commons.dotenv import DotenvError, set_dotenv_value

    context = command_context()
    known, own = _endpoint_key(context, provider)
    # A sign-in's name, or hermes-agent's for it unless that names an endpoint with keys
    # here (minimax, xai: their API-key presets).
    service = BY_NAME.get(provider) or (None if known else BY_NAME.get(ALIASES.get(provider, "")))
    if service is not None:
        if api_key_stdin:
            raise click.UsageError(
                f"{provider} is a sign-in and takes no key: drop --api-key-stdin"
            )
        names = keep_account(service, None, sign_in(service, issuer, base_url, region, no_browser))
        click.echo(
            f"Signed in to {service.label}; {len(names)} account(s), tried in order: "
            f"{', '.join(names)} (hermes auth list)"
        )
        return
    if issuer or base_url or region or no_browser:
        raise click.UsageError(
            "--issuer, --base-url, --region and --no-browser are for sign-ins: "
            + ", ".join(BY_NAME)
        )
    if api_key_stdin or not sys.stdin.isatty():
        key = sys.stdin.readline().strip()
    else:
        key = click.prompt(f"API key for {provider}", hide_input=True).strip()
    if not key:
        raise click.UsageError("no key was given")
    if not known:
        raise click.UsageError(
            f"no provider {provider!r}: name one `hermes model` lists (or add it under "
            "providers: in config.yaml first)"
        )
    pool = _pools(context).get(provider) or ([own] if own and context.secrets.get(own) else [])
    stem = f"{provider.upper().replace('-', '_')}_API_KEY"
    number = 2
    while f"{stem}_{number}" in pool or context.secrets.get(f"{stem}_{number}"):
        number += 1
    variable = stem if not pool and not context.secrets.get(stem) else f"{stem}_{number}"
    try:
        set_dotenv_value(Path(context.home) / ".env", variable, key)
    except DotenvError as exc:
        raise click.ClickException("; ".join(exc.problems)) from None
    names = [*pool, variable]

    def change(document: MutableMapping[str, Any]) -> None:
        pools = document.get("credential_pools")
        if not isinstance(pools, MutableMapping):
            pools = document["credential_pools"] = {}
        now = [str(n) for n in pools.get(provider) or pool]  # as config.yaml holds it now
        names[:] = [*now, variable] if variable not in now else now
        pools[provider] = list(names)

    _edit(change)
    click.echo(f"Added {variable} to {provider}'s pool ({len(names)} keys): {', '.join(names)}")


@auth.command("remove")
@click.argument("provider")
@click.argument("variable")
def remove(provider: str, variable: str) -> None:
    """Take VARIABLE out of PROVIDER's pool (the key stays in .env until you delete it), or
    sign out of a sign-in's account (hermes auth remove codex codex#2)."""
    from hermes_commons.credential_states import clear

    base = ALIASES.get(provider, provider)
    if base in BY_NAME and ("#" in variable or ALIASES.get(variable, variable) == base):
        account = parse_account(variable)[1] or base
        with changing() as sign_ins:
            accounts = [key for key, _entry in accounts_of(sign_ins, base)]
            if account not in accounts:
                raise click.ClickException(
                    f"{variable} is not one of {base}'s sign-ins: "
                    + (", ".join(accounts) or "none")
                )
            del sign_ins[account]
        clear(command_context().home, base, account)
        left = [key for key in accounts if key != account]
        click.echo(f"Signed out of {account}; left: {', '.join(left) or 'none'}")
        return
    names = _pools(command_context()).get(provider) or []
    if variable not in names:
        raise click.ClickException(
            f"{variable} is not in {provider}'s pool ({', '.join(names) or 'no pool'})"
        )
    left = [name for name in names if name != variable]

    def change(document: MutableMapping[str, Any]) -> None:
        pools = document.setdefault("credential_pools", {})
        if left:
            pools[provider] = left
        else:
            pools.pop(provider, None)

    _edit(change)
    clear(command_context().home, provider, variable)
    click.echo(f"Removed {variable} from {provider}'s pool; left: {', '.join(left) or 'none'}")


@auth.command("reset")
@click.argument("provider", required=False)
def reset(provider: str | None) -> None:
    """Forget that PROVIDER's keys (or every pool's) were cooling down or exhausted."""
    from hermes_commons.credential_states import clear, states

    context = command_context()
    names = [provider] if provider else sorted(states(context.home))
    for name in names:
        clear(context.home, name)
    click.echo("Reset: " + (", ".join(names) if names else "nothing was cooling down"))
