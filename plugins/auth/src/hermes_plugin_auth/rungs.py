"""A rung per service: a sign-in in auth.json is used when its endpoint is asked for by name,
or in auto mode before any API key."""

from __future__ import annotations

from collections.abc import Callable

from hermes_plugin_auth.services import Service
from hermes_plugin_auth.signin import SignIn
from hermes_plugin_auth.store import AuthStore
from hermes_sdk.ladder import LadderChoice, LadderContext, RungResult


def resolver(service: Service) -> Callable[[LadderContext], RungResult]:
    def resolve(context: LadderContext) -> RungResult:
        if not context.wants(service.name):
            return RungResult.skip(f"provider {context.provider!r} asked for")
        entry = AuthStore(context.home).get(service.name)
        if entry is None:
            if context.provider == service.name:
                return RungResult.fail(
                    "not signed in", f"sign in to {service.label}: hermes login {service.name}"
                )
            return RungResult.skip("not signed in")
        endpoint = service.endpoint(entry.get("base_url"), entry.get("account_id"))
        if context.provider is None and context.model and context.model not in endpoint.models:
            return RungResult.skip(f"model {context.model!r} is not one of {service.label}'s")
        choice = LadderChoice(
            endpoint,
            context.model or endpoint.default_model,
            source=f"the sign-in to {service.label} (auth.json)",
            token_source=SignIn(context.home, service),
        )
        return RungResult.match(choice, "signed in")

    return resolve
