"""What fixes a route's failure, in the words of the missing-key error: what failed, which
setting or file, and the command that fixes it. The ladder knows where each part of a route
came from (the key's variable, ``model.base_url`` or a ``providers:`` entry in config.yaml);
the provider that failed does not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hermes_sdk.ladder import LadderChoice
from hermes_sdk.models import ErrorKind, ProviderError

__all__ = ["fix_for"]

_UNREACHABLE = {ErrorKind.CONNECTION, ErrorKind.TIMEOUT}


def _url_setting(choice: LadderChoice) -> str | None:
    """The config.yaml key that holds the route's server address; None for a hosted
    service a rung knows."""
    source = choice.source
    if source.startswith("model.base_url"):
        return "model.base_url"
    if source.startswith("providers."):
        return f"providers.{source.split()[0].removeprefix('providers.')}.base_url"
    return None


def _key_setting(choice: LadderChoice) -> str:
    if choice.source.startswith("providers."):
        return f"providers.{choice.source.split()[0].removeprefix('providers.')}.api_key_env"
    return "model.api_key_env"


def fix_for(choice: LadderChoice, home: str) -> Callable[[ProviderError], str | None]:
    """The step that fixes ``choice``'s failures, by kind (None: the failure's own words are
    the best there is, such as a refusal by the model's policy)."""
    endpoint = choice.endpoint
    dotenv = Path(home) / ".env" if home else Path(".env")
    config = Path(home) / "config.yaml" if home else Path("config.yaml")
    keys = " or ".join(choice.key_names) or endpoint.api_key_env or ""
    url_setting = _url_setting(choice)

    def fix(error: ProviderError) -> str | None:
        kind = error.kind
        if choice.token_source is not None and kind in (ErrorKind.AUTH, ErrorKind.BILLING):
            # A sign-in's refusal says itself how to sign in again (a pool's: each account's).
            accounts = [*choice.key_names, *(n for m in choice.pool for n in m.key_names)]
            if kind is ErrorKind.AUTH:
                if len(accounts) < 2:
                    return None
                return "sign in again: " + "; ".join(f"hermes login {a}" for a in accounts)
            return (
                f"the plan or credit behind {', '.join(accounts) or endpoint.name} has run "
                f"out: top it up or wait for its limit to reset, or add an account (hermes auth "
                f"add {endpoint.name})"
            )
        if kind is ErrorKind.AUTH:
            if keys:
                return (
                    f"the key in {keys} was refused: put a valid one in {dotenv} (or the "
                    f"environment), or run hermes setup"
                )
            return (
                f"{endpoint.base_url} wants a key and none is set: put it in {dotenv} and name "
                f"its variable in {_key_setting(choice)} ({config}), or run hermes setup"
            )
        if kind is ErrorKind.BILLING:
            return f"add credit to the account whose key is in {keys or 'the key in use'}"
        if kind in _UNREACHABLE:
            if url_setting is not None:
                return (
                    f"check {url_setting} ({endpoint.base_url}) in {config}, and that the "
                    "server runs; hermes doctor --online tests it"
                )
            return (
                f"check this machine's network and {endpoint.name}'s status; "
                "hermes doctor --online tests it"
            )
        if kind is ErrorKind.BAD_REQUEST and error.status == 404:
            return (
                f"check the model name {choice.model!r} (model.default in {config}); "
                "hermes model lists the known ones"
            )
        return None

    return fix
