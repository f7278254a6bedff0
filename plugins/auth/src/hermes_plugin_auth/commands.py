"""``hermes login``, ``hermes logout`` and ``hermes auth``. Nothing here prints a token: status
says when a sign-in expires and whether it renews itself, never what it is."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import click

from hermes_plugin_auth.services import ALIASES, BY_NAME, DECLINED, SERVICES, Service
from hermes_plugin_auth.store import AuthStore, accounts_of
from hermes_sdk import Kind
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.specs import RungSpec


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


_NUMBER = re.compile(r"[0-9]{1,4}")


def _parse(name: str) -> tuple[str, str | None]:
    """(the service ``NAME`` or ``NAME#N`` names, with hermes-agent's names understood; the
    account's key in auth.json when it names a further account)."""
    base, hashed, number = name.partition("#")
    base = ALIASES.get(base, base)
    if not hashed:
        return base, None
    if not _NUMBER.fullmatch(number) or int(number) < 2:
        raise click.UsageError(f"{name!r}: an account is NAME or NAME#N with N from 2 ({base}#2)")
    return base, f"{base}#{int(number)}"


def _service(name: str) -> tuple[Service, str]:
    """The service ``NAME`` or ``NAME#N`` (its Nth account) signs in to, and the account's
    key in auth.json."""
    base, key = _parse(name)
    service = BY_NAME.get(base)
    if service is None and base in DECLINED:
        raise click.ClickException(DECLINED[base])
    if service is None:
        raise click.UsageError(
            f"no sign-in for {name!r}; one of: {', '.join(BY_NAME)} (API keys: hermes auth add)"
        )
    return service, key or base


def _keep(service: Service, account: str | None, entry: dict[str, Any]) -> list[str]:
    """Keep a sign-in as ``account`` (None: the service's next free one: NAME, else NAME#2,
    NAME#3...), unless another account of the service already is that account (the same
    ChatGPT account signed in twice); its kept pool state is forgotten. Returns the
    service's accounts in the order they are tried."""
    from hermes_commons.credential_states import clear

    with _changing() as sign_ins:
        accounts = accounts_of(sign_ins, service.name)
        same = entry.get("account_id")
        for key, kept in accounts:
            if same and key != account and kept.get("account_id") == same:
                raise click.ClickException(
                    f"that is the account {key} already holds: sign in to another one in the "
                    f"browser (or hermes login {key} to renew it)"
                )
        if account is None:
            taken = {key for key, _kept in accounts}
            account, number = service.name, 2
            while account in taken:
                account, number = f"{service.name}#{number}", number + 1
        sign_ins[account] = entry
        names = [key for key, _kept in accounts_of(sign_ins, service.name)]
    clear(_context().home, service.name, account)  # a fresh sign-in is not cooling down
    return names


def _say(text: str) -> None:
    click.echo(text, err=True)


def _sign_in_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of a sign-in, for ``hermes login`` and ``hermes auth add``."""
    options = [
        click.option(
            "--issuer", metavar="URL", help="Sign in elsewhere (GitHub Enterprise, your own)."
        ),
        click.option(
            "--base-url",
            metavar="URL",
            help="The model API the sign-in opens, if not the service's.",
        ),
        click.option(
            "--region",
            metavar="NAME",
            help="The service's other site (minimax-oauth: cn, for api.minimaxi.com).",
        ),
        click.option(
            "--no-browser",
            is_flag=True,
            help="Print the address to open and read back where the browser lands (over SSH).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _sign_in(
    service: Service,
    issuer: str | None,
    base_url: str | None,
    region: str | None,
    no_browser: bool,
    reuse_codex_cli: bool = False,
) -> dict[str, Any]:
    """Run the service's sign-in; the account's entry for auth.json."""
    from hermes_plugin_auth import usercode
    from hermes_plugin_auth.oauth import (
        SignInError,
        chatgpt_account,
        device_flow,
        exchange,
        pkce_flow,
    )

    site = (service.issuer, service.base_url)
    if region is not None:
        if region not in service.regions:
            where = ", ".join(service.regions) or "none"
            raise click.UsageError(f"{service.name} has no region {region!r} (regions: {where})")
        site = service.regions[region]
    issuer = (issuer or site[0]).rstrip("/")
    base_url = base_url or (site[1] if region else None)
    _check_issuer(issuer)
    show_qr = sys.stderr.isatty()
    try:
        if reuse_codex_cli:
            if service.name != "codex":
                raise click.UsageError("--reuse-codex-cli is for: hermes login codex")
            tokens = _codex_cli_tokens()
            issuer = service.issuer
        elif service.flow == "device":
            tokens = device_flow(service, issuer, _say, show_qr=show_qr)
        elif service.flow == "user_code":
            tokens = usercode.user_code_flow(service, issuer, _say, show_qr=show_qr)
        else:
            pasted = sys.stdin.readline if no_browser else None
            tokens = pkce_flow(service, issuer, _say, pasted)
        entry: dict[str, Any] = {
            "service": service.name,
            "issuer": issuer,
            "access_token": tokens.access_token,
            "refresh_token": tokens.refresh_token,
            "expires_at": tokens.expires_at,
            "scope": tokens.scope,
            "signed_in_at": time.time(),
        }
        if service.account_header:
            account = chatgpt_account(tokens)
            if account:
                entry["account_id"] = account
        if service.exchange_path:  # prove the subscription now, and learn its API's address
            token, expires_at, api = exchange(service, issuer, tokens.access_token)
            entry["exchanged"] = {"token": token, "expires_at": expires_at}
            base_url = base_url or api
    except SignInError as error:
        raise click.ClickException(str(error)) from None
    if base_url:
        entry["base_url"] = base_url
    return entry


@click.command()
@click.argument("name", metavar="PROVIDER")
@_sign_in_options
@click.option(
    "--reuse-codex-cli",
    is_flag=True,
    help="Use the Codex CLI's sign-in (~/.codex/auth.json) instead of signing in (codex).",
)
def login(
    name: str,
    issuer: str | None,
    base_url: str | None,
    region: str | None,
    no_browser: bool,
    reuse_codex_cli: bool,
) -> None:
    """Sign in to PROVIDER (nous, copilot, codex, xai-oauth, qwen-oauth, minimax-oauth): its
    own OAuth flow, a device code to type in or a browser sign-in. The tokens stay in
    HERMES_HOME/auth.json (mode 0600) and renew themselves. PROVIDER#2 signs in again the
    second account ``hermes auth add PROVIDER`` added."""
    service, account = _service(name)
    existing = AuthStore(_context().home).get(account)
    if existing is None and account != service.name:
        raise click.UsageError(f"no account {account}: add one with hermes auth add {service.name}")
    if existing is not None and region is None and issuer is None:  # stay where it was
        sites = service.regions.items()
        region = next((r for r, (at, _api) in sites if at == existing.get("issuer")), None)
        issuer = None if region else existing.get("issuer")  # GitHub Enterprise stays
        base_url = base_url or existing.get("base_url")
    entry = _sign_in(service, issuer, base_url, region, no_browser, reuse_codex_cli)
    _keep(service, account, entry)
    if reuse_codex_cli:
        click.echo(
            "Note: the Codex CLI and Hermes now share one refresh token; the first to renew "
            "it signs the other out (then: codex login, or hermes login codex).",
            err=True,
        )
    click.echo(
        f"Signed in to {service.label}. It is used when model.provider is {service.name}, or "
        f"when no other provider is chosen (hermes model shows which)."
    )


def _check_issuer(issuer: str) -> None:
    """Tokens travel only over HTTPS, or on this machine's loopback."""
    from urllib.parse import urlsplit

    url = urlsplit(issuer)
    loopback = url.hostname in ("127.0.0.1", "localhost", "::1")
    if url.scheme != "https" and not (url.scheme == "http" and loopback):
        raise click.UsageError(f"--issuer must be an https:// address, not {issuer!r}")


@contextlib.contextmanager
def _changing() -> Iterator[dict[str, dict[str, Any]]]:
    from hermes_plugin_auth.store import AuthFileError

    try:
        with AuthStore(_context().home).changing() as sign_ins:
            yield sign_ins
    except AuthFileError as error:
        raise click.ClickException(str(error)) from None


def _codex_cli_tokens() -> Any:
    from hermes_plugin_auth.oauth import SignInError, Tokens, jwt_expiry

    path = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "auth.json"
    try:
        tokens = json.loads(path.read_text(encoding="utf-8"))["tokens"]
        access = str(tokens["access_token"])
    except (OSError, ValueError, KeyError, TypeError):
        raise SignInError(f"no Codex CLI sign-in in {path}: run codex login first") from None
    return Tokens(access, tokens.get("refresh_token"), jwt_expiry(access))


@click.command()
@click.argument("name", metavar="[PROVIDER]", required=False)
def logout(name: str | None) -> None:
    """Forget PROVIDER's sign-ins (every account of it; PROVIDER#2: that one), or every
    sign-in. (The service may keep its own record of the grant: revoke it there too if the
    machine is not yours.)"""
    from hermes_commons.credential_states import clear

    with _changing() as sign_ins:
        if name is None:
            names = sorted(sign_ins)
        else:
            base, key = _parse(name)
            if key is not None:
                names = [key]
            elif base in BY_NAME:
                names = [each for each, _entry in accounts_of(sign_ins, base)]
            else:
                names = [name]  # a sign-in of a service this Hermes no longer knows
        if name and (not names or any(each not in sign_ins for each in names)):
            raise click.ClickException(f"not signed in to {name}")
        for each in names:
            del sign_ins[each]
    for each in names:  # its kept pool state goes with it
        clear(_context().home, each.partition("#")[0], each)
    click.echo("Signed out of " + (", ".join(names) if names else "nothing (no sign-ins)"))


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
    store = AuthStore(_context().home)
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

    context = _context()
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
    edit = _context().edit_config
    if edit is None:
        raise click.ClickException("this Hermes cannot change config.yaml from a plugin")
    edit(change)


@auth.command("add")
@click.argument("provider")
@click.option("--api-key-stdin", is_flag=True, help="Read the key from stdin (one line).")
@_sign_in_options
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

    context = _context()
    known, own = _endpoint_key(context, provider)
    # A sign-in's name, or hermes-agent's for it unless that names an endpoint with keys
    # here (minimax, xai: their API-key presets).
    service = BY_NAME.get(provider) or (None if known else BY_NAME.get(ALIASES.get(provider, "")))
    if service is not None:
        if api_key_stdin:
            raise click.UsageError(
                f"{provider} is a sign-in and takes no key: drop --api-key-stdin"
            )
        names = _keep(service, None, _sign_in(service, issuer, base_url, region, no_browser))
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
        account = _parse(variable)[1] or base
        with _changing() as sign_ins:
            accounts = [key for key, _entry in accounts_of(sign_ins, base)]
            if account not in accounts:
                raise click.ClickException(
                    f"{variable} is not one of {base}'s sign-ins: "
                    + (", ".join(accounts) or "none")
                )
            del sign_ins[account]
        clear(_context().home, base, account)
        left = [key for key in accounts if key != account]
        click.echo(f"Signed out of {account}; left: {', '.join(left) or 'none'}")
        return
    names = _pools(_context()).get(provider) or []
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
    clear(_context().home, provider, variable)
    click.echo(f"Removed {variable} from {provider}'s pool; left: {', '.join(left) or 'none'}")


@auth.command("reset")
@click.argument("provider", required=False)
def reset(provider: str | None) -> None:
    """Forget that PROVIDER's keys (or every pool's) were cooling down or exhausted."""
    from hermes_commons.credential_states import clear, states

    context = _context()
    names = [provider] if provider else sorted(states(context.home))
    for name in names:
        clear(context.home, name)
    click.echo("Reset: " + (", ".join(names) if names else "nothing was cooling down"))
