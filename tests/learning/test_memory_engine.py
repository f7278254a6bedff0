"""Memory through the turn engine and the kernel's tool environment: the frozen snapshot, one
memory per chat user, session search limited to the user's own sessions, and an external
provider's recall shown to the model but not stored."""

from __future__ import annotations

import asyncio

import pytest
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.engine.control import TurnControl
from hermes_kernel.store.state import StateStore
from hermes_kernel.tooling.environment import ToolEnvironment
from hermes_testkit import Reply


@pytest.fixture
def world(hermes, make_engine, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    app = hermes.app()
    store = StateStore(Database(hermes.home / "state.db"))
    routes = []
    env = ToolEnvironment(app.host, app.settings, store=store, aside_route=lambda: routes[0])
    tools = [spec for spec in app.host.tools() if spec.name in ("memory", "session_search")]
    app.host.load_observers()
    from hermes_kernel.memory.external import ExternalMemory
    from hermes_kernel.runtime.agent import _Observer

    observer = _Observer(app, None, ExternalMemory(app.host, app.settings))

    def engine(**options):
        made = make_engine(
            tools,
            store=store,
            observer=observer,
            engine_options={
                "tool_context": env.context,
                "config": app.settings.raw,
                **options,
            },
        )
        routes.append(made.routes[0])
        return made

    yield engine, store, env
    env.close()
    store.close()


def run(engine, session_id: str, text: str):
    return asyncio.run(engine.run_turn(session_id, text, TurnControl()))


def system_prompt(request) -> str:
    return str(request.json["messages"][0]["content"])


def test_the_snapshot_is_frozen_and_each_user_has_their_own(world, openai_server):
    make, _, _ = world
    engine = make()
    alice = engine.start_session("telegram", user_scope="telegram:1")
    openai_server.queue(
        Reply.tool_call("memory", {"action": "add", "target": "user", "content": "Is a nurse."}),
        Reply.say("Noted."),
        Reply.say("Hello again."),
    )
    run(engine, alice.id, "I am a nurse, remember that")
    run(engine, alice.id, "hi")
    assert "Is a nurse." not in system_prompt(openai_server.requests[-1])  # frozen
    assert "USER PROFILE (who the user is) [0% of 1375 chars]\n(empty)" in system_prompt(
        openai_server.requests[-1]
    )

    openai_server.queue(Reply.say("Hi Alice."), Reply.say("Hi Bob."))
    later = engine.start_session("telegram", user_scope="telegram:1")
    run(engine, later.id, "hello")
    assert "USER PROFILE (who the user is) [0% of 1375 chars]\nIs a nurse." in system_prompt(
        openai_server.requests[-1]
    )
    bob = engine.start_session("telegram", user_scope="telegram:2")
    run(engine, bob.id, "hello")
    assert "Is a nurse." not in system_prompt(openai_server.requests[-1])


def test_session_search_sees_only_the_users_own_sessions(world, openai_server):
    make, _, _ = world
    engine = make()
    for scope, secret in (("telegram:1", "purple elephant"), ("telegram:2", "purple giraffe")):
        session = engine.start_session("telegram", user_scope=scope)
        openai_server.queue(Reply.say("ok"))
        run(engine, session.id, f"my hint word is {secret}")
    searcher = engine.start_session("telegram", user_scope="telegram:1")
    openai_server.queue(Reply.tool_call("session_search", {"query": "purple"}), Reply.say("found"))
    run(engine, searcher.id, "what was my hint word?")
    (result,) = [
        m["content"] for m in openai_server.requests[-1].json["messages"] if m["role"] == "tool"
    ]
    assert "[purple] elephant" in result and "giraffe" not in result
    assert result.startswith("1 matches")


def test_session_search_summary_comes_from_the_model(world, openai_server):
    make, _, _ = world
    engine = make()
    old = engine.start_session("cli")
    openai_server.queue(Reply.say("Use port 8443 for the staging proxy."))
    run(engine, old.id, "which port does the staging proxy use?")
    session = engine.start_session("cli")
    openai_server.queue(
        Reply.tool_call("session_search", {"query": "staging proxy", "summarize": True}),
        Reply.say(f"The staging proxy listens on 8443 [{old.id}]."),
        Reply.say("It is 8443."),
    )
    run(engine, session.id, "remind me of the staging proxy port")
    summary_request = openai_server.requests[-2].json
    assert "condense search hits" in summary_request["messages"][0]["content"]
    assert "tools" not in summary_request  # an aside, not a turn
    (result,) = [
        m["content"] for m in openai_server.requests[-1].json["messages"] if m["role"] == "tool"
    ]
    assert result.startswith(f"The staging proxy listens on 8443 [{old.id}].")


def test_recalled_memory_is_shown_to_the_model_but_not_stored(world, openai_server):
    make, store, _ = world
    engine = make(prefetch=lambda session, text: f"recalled for {text!r}")
    session = engine.start_session("cli")
    openai_server.queue(Reply.say("ok"))
    run(engine, session.id, "plan my week")
    sent = openai_server.requests[-1].json["messages"][-1]["content"]
    assert (
        sent == "plan my week\n\n<recalled-memory>\nrecalled for 'plan my week'\n</recalled-memory>"
    )
    stored = [m.content for m in store.messages.of_session(session.id) if m.role == "user"]
    assert stored == ["plan my week"]


def test_a_review_uses_the_backend_of_the_session_it_reviews(world):
    make, _, env = world
    engine = make()
    parent = engine.start_session("cli")
    review = engine.start_session("review", parent_session_id=parent.id)
    other = engine.start_session("cli")
    control = TurnControl()
    backend = env.context(parent, control).backend().inner
    assert env.context(review, control).backend().inner is backend
    assert env.context(other, control).backend().inner is not backend
