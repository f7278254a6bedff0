"""``hermes login`` and ``hermes logout``, and what signing in takes (``hermes auth add`` of
a sign-in uses it too). Nothing here prints a token."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from hermes_plugin_auth.services import ALIASES, BY_NAME, DECLINED, Service
from hermes_plugin_auth.store import AuthStore, accounts_of
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext


def command_context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


_NUMBER = re.compile(r"[0-9]{1,4}")


def parse_account(name: str) -> tuple[str, str | None]:
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
    base, key = parse_account(name)
    service = BY_NAME.get(base)
    if service is None and base in DECLINED:
        raise click.ClickException(DECLINED[base])
    if service is None:
        raise click.UsageError(
            f"no sign-in for {name!r}; one of: {', '.join(BY_NAME)} (API keys: hermes auth add)"
        )
    return service, key or base


def keep_account(service: Service, account: str | None, entry: dict[str, Any]) -> list[str]:
    """Keep a sign-in as ``account`` (None: the service's next free one: NAME, else NAME#2,
    NAME#3...), unless another account of the service already is that account (the same
    ChatGPT account signed in twice); its kept pool state is forgotten. Returns the
    service's accounts in the order they are tried."""
    from hermes_commons.credential_states import clear

    with changing() as sign_ins:
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
    clear(command_context().home, service.name, account)  # a fresh sign-in is not cooling down
    return names


def _say(text: str) -> None:
    click.echo(text, err=True)


def sign_in_options(command: Callable[..., None]) -> Callable[..., None]:
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


def sign_in(
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
@sign_in_options
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
    existing = AuthStore(command_context().home).get(account)
    if existing is None and account != service.name:
        raise click.UsageError(f"no account {account}: add one with hermes auth add {service.name}")
    if existing is not None and region is None and issuer is None:  # stay where it was
        sites = service.regions.items()
        region = next((r for r, (at, _api) in sites if at == existing.get("issuer")), None)
        issuer = None if region else existing.get("issuer")  # GitHub Enterprise stays
        base_url = base_url or existing.get("base_url")
    entry = sign_in(service, issuer, base_url, region, no_browser, reuse_codex_cli)
    keep_account(service, account, entry)
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
def changing() -> Iterator[dict[str, dict[str, Any]]]:
    from hermes_plugin_auth.store import AuthFileError

    try:
        with AuthStore(command_context().home).changing() as sign_ins:
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

    with changing() as sign_ins:
        if name is None:
            names = sorted(sign_ins)
        else:
            base, key = parse_account(name)
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
        clear(command_context().home, each.partition("#")[0], each)
    click.echo("Signed out of " + (", ".join(names) if names else "nothing (no sign-ins)"))
