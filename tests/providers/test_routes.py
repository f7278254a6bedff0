"""Credential pools, fallback providers, the primary's cool-down, usage and cost, and
``hermes model test``: against real scripted servers on loopback."""

from __future__ import annotations

import asyncio
import json

import pytest
from hermes_plugin_provider_openai.client import ChatCompletionsProvider
from hermes_plugin_providers.pool import PooledProvider
from hermes_plugin_providers.pricing import PriceBook
from hermes_plugin_store_sqlite.database import Database

from hermes_commons.text import describe_cost
from hermes_kernel.engine.models import ModelRoute, RetryPolicy, RouteHealth
from hermes_kernel.engine.turn import EngineSettings, TurnEngine
from hermes_kernel.providers.routing import NoModel, model_setup
from hermes_kernel.store.state import StateStore
from hermes_sdk import ModelPrice, PriceTableSpec
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ModelUsage,
    ProviderError,
    ProviderSettings,
)
from hermes_testkit import Reply, ScriptedOpenAIServer

REQUEST = ModelRequest("test-model", (ChatMessage("user", "hi"),))


def keys_sent(server: ScriptedOpenAIServer) -> list[str]:
    return [r.headers["authorization"].removeprefix("Bearer ") for r in server.requests]


def pool(server, keys, reread=lambda _name: None, clock=None):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    options = {"clock": clock} if clock else {}
    provider = PooledProvider(
        ProviderSettings(base_url=server.base_url, timeout_seconds=5),
        keys,
        ChatCompletionsProvider,
        reread=reread,
        sleep=sleep,
        **options,
    )
    return provider, waits


def ask(provider, request=REQUEST):
    async def run():
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_rate_limit_retries_once_then_rotates(openai_server) -> None:
    openai_server.queue(Reply.error(429, retry_after=2), Reply.error(429), Reply.say("from B"))
    provider, waits = pool(openai_server, [("KEY_A", "sk-a"), ("KEY_B", "sk-b")])
    assert ask(provider).content == "from B"
    assert keys_sent(openai_server) == ["sk-a", "sk-a", "sk-b"]
    assert waits == [2.0], "the retry on the same key honours Retry-After"


def test_billing_rotates_at_once_and_the_pool_stays_on_the_key_that_works(openai_server) -> None:
    openai_server.queue(Reply.error(402), Reply.say("one"), Reply.say("two"))
    provider, _ = pool(openai_server, [("KEY_A", "sk-a"), ("KEY_B", "sk-b")])

    async def twice():
        try:
            return [(await provider.complete(REQUEST)).content for _ in range(2)]
        finally:
            await provider.aclose()

    assert asyncio.run(twice()) == ["one", "two"]
    assert keys_sent(openai_server) == ["sk-a", "sk-b", "sk-b"], "key A cools down"


def test_a_rejected_key_is_read_again_before_rotating(openai_server) -> None:
    openai_server.queue(Reply.error(401), Reply.say("refreshed"))
    fresh = {"KEY_A": "sk-a-new"}
    provider, _ = pool(openai_server, [("KEY_A", "sk-a-old"), ("KEY_B", "sk-b")], fresh.get)
    assert ask(provider).content == "refreshed"
    assert keys_sent(openai_server) == ["sk-a-old", "sk-a-new"]


def test_cooling_keys_are_skipped_until_they_recover(openai_server) -> None:
    now = [1000.0]
    openai_server.queue(Reply.error(402), *[Reply.say("ok")] * 4)
    provider, _ = pool(openai_server, [("KEY_A", "sk-a"), ("KEY_B", "sk-b")], clock=lambda: now[0])
    ask(provider)
    ask(provider)
    provider._current = 0  # as if B had never answered: A is next in line, but cooling
    now[0] += 10
    ask(provider)
    assert keys_sent(openai_server)[-1] == "sk-b"
    now[0] += 60  # past A's 30 s cool-down
    provider._current = 0
    ask(provider)
    assert keys_sent(openai_server)[-1] == "sk-a"


def test_when_every_key_fails_the_error_names_variables_not_keys(openai_server) -> None:
    openai_server.queue(Reply.error(402), Reply.error(402))
    provider, _ = pool(openai_server, [("KEY_A", "sk-secret-a"), ("KEY_B", "sk-secret-b")])
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.kind is ErrorKind.BILLING
    assert "every key in the pool failed (KEY_A, KEY_B)" in str(caught.value)
    assert "sk-secret" not in str(caught.value)


def test_a_server_error_is_not_the_keys_fault(openai_server) -> None:
    openai_server.queue(Reply.error(500))
    provider, _ = pool(openai_server, [("KEY_A", "sk-a"), ("KEY_B", "sk-b")])
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.kind is ErrorKind.SERVER
    assert keys_sent(openai_server) == ["sk-a"], "left to the engine's retry and fallback"


def test_fallback_routes_come_from_config_and_keys_stay_with_their_endpoint(
    hermes, monkeypatch
) -> None:
    with ScriptedOpenAIServer() as primary, ScriptedOpenAIServer() as backup:
        monkeypatch.setenv("POOL_1", "sk-primary-1")
        monkeypatch.setenv("POOL_2", "sk-primary-2")
        monkeypatch.setenv("BACKUP_KEY", "sk-backup")
        hermes.config(
            "model:\n  provider: main\n  fallback_providers:\n    - {provider: backup, model: b-model}\n"
            "    - {provider: anthropic}\n"
            f"providers:\n  main:\n    base_url: {primary.base_url}\n    models: [m-model]\n"
            f"  backup:\n    base_url: {backup.base_url}\n    api_key_env: BACKUP_KEY\n"
            "credential_pools:\n  main: [POOL_1, POOL_2]\n"
        )
        app = hermes.app()
        setup = model_setup(app.host, app.settings)
        assert [(r.name, r.model) for r in setup.routes] == [
            ("main", "m-model"),
            ("backup", "b-model"),
        ]
        assert setup.warnings == [
            "fallback provider 'anthropic' has no key (ANTHROPIC_API_KEY is not set); skipped"
        ]
        primary.queue(*[Reply.error(402)] * 2)
        backup.queue(Reply.say("the backup answered"))
        store = StateStore(Database(hermes.home / "state.db"))
        engine = TurnEngine(
            store,
            setup.routes,
            {},
            hermes.home,
            settings=EngineSettings(retry=RetryPolicy(attempts=1)),
        )
        session = engine.start_session("cli")
        result = asyncio.run(engine.run_turn(session.id, "hello"))
        store.close()
        assert result.text == "the backup answered"
        assert keys_sent(primary) == ["sk-primary-1", "sk-primary-2"]
        assert keys_sent(backup) == ["sk-backup"], "pool keys never leave their endpoint"

        strict = model_setup(app.host, app.settings, provider="main")
        assert len(strict.routes) == 1, "a command-line choice never falls back"


def test_a_transport_no_plugin_provides_is_a_clear_error(hermes) -> None:
    hermes.config(
        "model:\n  provider: odd\n"
        "providers:\n  odd:\n    base_url: http://127.0.0.1:9/v1\n    transport: grpc\n    models: [x]\n"
    )
    app = hermes.app()
    with pytest.raises(NoModel, match="speaks 'grpc', which no enabled plugin provides"):
        model_setup(app.host, app.settings)


def test_an_endpoint_naming_no_transport_needs_a_provider_that_speaks_for_such(
    hermes, monkeypatch
) -> None:
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "providers,provider-anthropic")  # it does not
    hermes.config(
        "model:\n  provider: mine\n"
        "providers:\n  mine:\n    base_url: http://127.0.0.1:9/v1\n    models: [x]\n"
    )
    app = hermes.app()
    with pytest.raises(NoModel, match="names no transport and no enabled provider plugin"):
        model_setup(app.host, app.settings)


def test_the_primary_cools_down_after_repeated_failures() -> None:
    now = [0.0]
    health = RouteHealth(failures_to_cool=3, base_cooldown=60, clock=lambda: now[0])
    routes = ["primary", "backup"]
    for _ in range(2):
        assert health.order(routes) == (routes, True)
        health.record(0, 1)
    assert not health.cooling
    health.record(0, 1)
    assert health.cooling
    assert health.order(routes) == (["backup", "primary"], False), "last, not gone"
    assert health.order(["primary"]) == (["primary"], True)
    now[0] += 61
    assert health.order(routes) == (routes, True)
    for _ in range(3):
        health.record(0, 1)
    assert health.cool_until == pytest.approx(now[0] + 120), "the cool-down doubles"
    health.record(0, 0)
    assert health.failures == 0 and health.cooldowns == 0


def test_costs_use_the_price_tables_and_unknown_is_not_free() -> None:
    book = PriceBook(
        [
            PriceTableSpec(name="a", prices={"m": ModelPrice(1.0, 2.0, cache_read=0.1)}),
            PriceTableSpec(name="b", prices={"m": ModelPrice(9.0, 9.0)}),
        ]
    )
    usage = ModelUsage(input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=1_000_000)
    assert book.cost("m", usage) == pytest.approx(1.0 + 1.0 + 0.1)
    assert book.cost("vendor/m", usage) == book.cost("m-2025-01-31", usage)
    assert book.cost("other", usage) is None
    assert book.conflicts == ["m is priced by more than one table (b)"]
    assert describe_cost(0.0, 2, 2) == "unknown"
    assert describe_cost(0.5, 1, 3) == "$0.5000 + unknown (1 call unpriced)"
    assert describe_cost(0.25, 0) == "$0.2500"


def test_usage_and_cost_are_stored_per_call_and_per_session(tmp_path, openai_server) -> None:
    openai_server.queue(
        Reply.say("priced", usage={"prompt_tokens": 1000, "completion_tokens": 100}),
        Reply.say("unpriced", usage={"prompt_tokens": 10, "completion_tokens": 1}),
    )
    provider = ChatCompletionsProvider(ProviderSettings(base_url=openai_server.base_url))
    book = PriceBook([PriceTableSpec(name="t", prices={"known": ModelPrice(2.0, 4.0)})])
    store = StateStore(Database(tmp_path / "state.db"))
    for model in ("known", "mystery"):
        engine = TurnEngine(
            store, [ModelRoute("r", provider, model)], {}, tmp_path, pricing=book.cost
        )
        session = engine.start_session("cli")
        asyncio.run(engine.run_turn(session.id, "hi"))
    rows = store.db.query(
        "SELECT model, input_tokens, output_tokens, cost_usd FROM model_calls ORDER BY id"
    )
    store.close()
    assert [tuple(row) for row in rows] == [
        ("known", 1000, 100, pytest.approx((1000 * 2.0 + 100 * 4.0) / 1e6)),
        ("mystery", 10, 1, None),
    ]


def test_model_test_reports_latency_and_usage(hermes, openai_server) -> None:
    openai_server.queue(
        Reply.say(
            "Hello there, five words here.", usage={"prompt_tokens": 12, "completion_tokens": 7}
        )
    )
    hermes.config(
        "model:\n  provider: mine\n"
        f"providers:\n  mine:\n    base_url: {openai_server.base_url}\n    models: [gpt-4o-mini]\n"
    )
    result = hermes("model", "test", "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["provider"] == "mine" and report["reply"] == "Hello there, five words here."
    assert report["input_tokens"] == 12 and report["output_tokens"] == 7
    assert report["latency_s"] > 0 and report["cost_usd"] == pytest.approx(
        (12 * 0.15 + 7 * 0.6) / 1e6
    )
    openai_server.queue(Reply.error(401))
    failed = hermes("model", "test")
    assert failed.code == 1
    (line,) = failed.err.strip().splitlines()  # one line, ending with what fixes it
    assert line.startswith("Error: mine / gpt-4o-mini: HTTP 401 (auth): scripted error 401; ")
    assert f"put it in {hermes.home / '.env'}" in line and "providers.mine.api_key_env" in line


def test_a_long_retry_after_rotates_at_once(openai_server) -> None:
    openai_server.queue(Reply.error(429, retry_after=60), Reply.say("from B"))
    provider, waits = pool(openai_server, [("KEY_A", "sk-a"), ("KEY_B", "sk-b")])
    assert ask(provider).content == "from B"
    assert keys_sent(openai_server) == ["sk-a", "sk-b"] and waits == []


def test_a_sign_ins_old_clients_are_closed_not_kept_for_ever() -> None:
    """A gateway renews a sign-in's token every hour for months: at most the client of the
    token before the current one is kept (a turn may still stream through it)."""
    import asyncio

    from hermes_plugin_providers.signed_in import SignedInProvider

    from hermes_sdk.models import ModelRequest, ModelResponse, ProviderSettings

    closed: list[str] = []

    class Client:
        def __init__(self, settings: ProviderSettings) -> None:
            self.key = settings.api_key or ""

        async def complete(self, request: ModelRequest, on_text: object = None) -> ModelResponse:
            return ModelResponse(content=self.key)

        async def aclose(self) -> None:
            closed.append(self.key)

    class Tokens:
        def __init__(self) -> None:
            self.number = 0

        async def token(self, *, renew: bool = False) -> str:
            self.number += 1
            return f"token-{self.number}"

    async def run() -> list[str]:
        provider = SignedInProvider(ProviderSettings(base_url="http://x"), Tokens(), Client, "s")
        said = [(await provider.complete(ModelRequest("m", []))).content for _ in range(5)]
        assert closed == ["token-1", "token-2", "token-3"]  # token-4's client may still stream
        await provider.aclose()
        return said

    assert asyncio.run(run()) == [f"token-{n}" for n in range(1, 6)]
    assert closed == ["token-1", "token-2", "token-3", "token-4", "token-5"]
