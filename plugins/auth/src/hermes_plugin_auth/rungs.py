"""A rung per service: a sign-in in auth.json is used when its endpoint is asked for by name,
or in auto mode before any API key. Several accounts of one service (``hermes auth add
codex``) are one pool: the first account first, the others when it is rate-limited,
out of its plan's usage, or refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_plugin_auth.services import Service
from hermes_plugin_auth.signin import SignIn
from hermes_plugin_auth.store import AuthStore, accounts_of
from hermes_sdk.ladder import LadderChoice, LadderContext, RungResult


def resolver(service: Service) -> Callable[[LadderContext], RungResult]:
    def resolve(context: LadderContext) -> RungResult:
        if not context.wants(service.name):
            return RungResult.skip(f"provider {context.provider!r} asked for")
        accounts = accounts_of(AuthStore(context.home).sign_ins(), service.name)
        if not accounts:
            if context.provider == service.name:
                return RungResult.fail(
                    "not signed in", f"sign in to {service.label}: hermes login {service.name}"
                )
            return RungResult.skip("not signed in")
        choices = [_choice(context, service, key, entry) for key, entry in accounts]
        first = choices[0]
        if (
            context.provider is None
            and context.model
            and context.model not in first.endpoint.models
        ):
            return RungResult.skip(f"model {context.model!r} is not one of {service.label}'s")
        if len(choices) > 1:
            first = LadderChoice(
                first.endpoint,
                first.model,
                source=f"{len(choices)} sign-ins to {service.label} (auth.json)",
                key_names=first.key_names,
                token_source=first.token_source,
                pool=tuple(choices[1:]),
            )
        return RungResult.match(first, "signed in")

    return resolve


def _choice(
    context: LadderContext, service: Service, key: str, entry: dict[str, Any]
) -> LadderChoice:
    endpoint = service.endpoint(entry.get("base_url"), entry.get("account_id"))
    return LadderChoice(
        endpoint,
        context.model or endpoint.default_model,
        source=f"the sign-in to {service.label} (auth.json)",
        key_names=(key,),
        token_source=SignIn(context.home, service, key),
    )
