"""The provider ladder and the router on their own, without a kernel: rungs that raise or
collide, the failure that says what to do, routes built from what plugins provide (a
credential pool for several keys), and prices."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_providers.ladder import Rung, explain, make_context, order_rungs, walk
from hermes_plugin_providers.pool import PooledProvider
from hermes_plugin_providers.routes import LadderRouter

from hermes_sdk import Kind, ModelPrice, PriceTableSpec, ProviderSpec, RungSpec, Spec
from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext, RungOutcome, RungResult
from hermes_sdk.models import ModelUsage, ProviderSettings
from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.routing import NoModel, RouteRequest


def test_a_rung_that_raises_is_reported_and_skipped(tmp_path) -> None:
    def broken(_context):
        raise RuntimeError("boom")

    def last(_context):
        return RungResult.skip("nothing here")

    rungs, problems = order_rungs(
        [
            Rung(RungSpec(name="broken", position=600, resolve=broken), "plugin-a"),
            Rung(RungSpec(name="same-place", position=600, resolve=last), "plugin-b"),
            Rung(RungSpec(name="last", position=700, resolve=last), "plugin-c"),
        ]
    )
    assert problems == [
        "rung 'same-place' from plugin plugin-b is ignored: position 600 is taken by 'broken' (plugin-a)"
    ]
    context = make_context(rungs, {}, tmp_path, lambda _name: None)
    report = walk(rungs, context, problems)
    assert "rung 'broken' (plugin-a) failed: boom" in report.problems
    assert [step.rung.spec.name for step in report.steps][-2:] == ["broken", "last"]
    assert report.steps[-1].result is not None
    assert report.steps[-1].result.outcome is RungOutcome.PASS
    assert any("error: boom" in line for line in explain(report))
    assert report.choice is None and "no rung could supply a model provider" in (
        report.failure or ""
    )
    assert "set model.base_url to a model server, or install a provider plugin" in (
        report.failure or ""
    )  # these rungs name no key to set


def test_with_no_provider_plugin_the_failure_says_so(tmp_path) -> None:
    rungs, _ = order_rungs([])
    report = walk(rungs, make_context(rungs, {}, tmp_path, lambda _name: None))
    assert "no provider plugin is installed (see `hermes plugins list`)" in (report.failure or "")


class Client:
    """A model client as a provider plugin's factory builds one (never called here)."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings


ACME = Endpoint(
    name="acme",
    provider="chat",
    base_url="https://acme.example/v1",
    api_key_env="ACME_KEY",
    default_model="acme-1",
)


def acme_rung(context: LadderContext) -> RungResult:
    key = context.secret("ACME_KEY")
    if not key:
        return RungResult.skip("ACME_KEY not set")
    return RungResult.match(LadderChoice(ACME, "acme-1", (key,), key_names=("ACME_KEY",)), "key")


def request(
    tmp_path: Path, secrets: dict[str, str], config: dict[str, object] | None = None
) -> RouteRequest:
    specs: dict[Kind, list[Spec]] = {
        Kind.RUNG: [RungSpec(name="acme-key", position=550, resolve=acme_rung, endpoint=ACME)],
        Kind.PROVIDER: [ProviderSpec(name="chat", factory=Client)],
        Kind.PRICES: [PriceTableSpec(name="acme", prices={"acme-1": ModelPrice(1.0, 2.0)})],
    }
    owners = {"acme-key": "plugin-acme"}
    return RouteRequest(
        config=config or {},
        home=tmp_path,
        secret=secrets.get,
        reread=secrets.get,
        provided=ProvidedSpecs(specs, owner=lambda spec: owners.get(spec.name, "")),
    )


def test_the_router_routes_to_the_matching_rung_and_explains_with_owners(tmp_path) -> None:
    routing = LadderRouter().route(request(tmp_path, {"ACME_KEY": "k1"}))
    (route,) = routing.routes
    assert (route.name, route.model) == ("acme", "acme-1")
    assert isinstance(route.provider, Client) and route.provider.settings.api_key == "k1"
    line = next(line for line in routing.view.explanation if "acme-key" in line)
    assert "plugin-acme" in line and "MATCH" in line


def test_several_keys_in_a_pool_make_a_pooled_provider(tmp_path) -> None:
    config = {"credential_pools": {"acme": ["ACME_KEY", "ACME_KEY_2"]}}
    routing = LadderRouter().route(request(tmp_path, {"ACME_KEY": "a", "ACME_KEY_2": "b"}, config))
    assert isinstance(routing.routes[0].provider, PooledProvider)


def test_no_key_is_one_line_naming_the_variable_and_the_file(tmp_path) -> None:
    with pytest.raises(NoModel) as failed:
        LadderRouter().route(request(tmp_path, {}))
    message = str(failed.value)
    assert "\n" not in message and "set ACME_KEY in " in message and ".env" in message
    view = LadderRouter().view(request(tmp_path, {}))
    assert view.choice is None and view.failure == message
    assert "acme" in view.endpoints


def test_an_endpoint_whose_transport_is_not_installed_says_what_to_install(tmp_path) -> None:
    config = {"providers": {"mine": {"base_url": "http://x/v1", "transport": "grpc"}}}
    config["model"] = {"provider": "mine", "default": "m"}
    with pytest.raises(NoModel, match="speaks 'grpc', which no enabled plugin provides"):
        LadderRouter().route(request(tmp_path, {}, config))


def test_costs_come_from_the_price_tables_provided(tmp_path) -> None:
    cost = LadderRouter().cost(request(tmp_path, {}).provided)
    assert cost("acme-1", ModelUsage(input_tokens=1_000_000, output_tokens=500_000)) == 2.0
    assert cost("unpriced", ModelUsage(input_tokens=10)) is None
