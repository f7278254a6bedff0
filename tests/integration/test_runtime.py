"""The kernel's runtime as a front-end plugin sees it (hermes_sdk.runtime.open_runtime), on a
home whose model is the scripted server: sessions, events, questions, stop, the store,
delivery and what it refuses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hermes_sdk.runtime import (
    DeliveryUnavailable,
    Question,
    SessionBusy,
    SessionNotFound,
    SessionOptions,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    open_runtime,
)
from hermes_sdk.tooling import HistoryQuery
from hermes_testkit import Reply
from hermes_testkit.frontend_tests import scripted_home


@pytest.fixture
def home(tmp_path, openai_server, monkeypatch) -> Path:
    return scripted_home(tmp_path, openai_server, monkeypatch)


def test_a_turns_events_arrive_in_order_and_end_with_usage(home, openai_server):
    openai_server.queue(
        Reply.tool_call("todo", {"todos": [{"id": "1", "content": "x", "status": "pending"}]}),
        Reply.say("Planned it.", usage={"prompt_tokens": 30, "completion_tokens": 4}),
    )

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test", title="t"))
            turn = runtime.start_turn(session.session_id, "plan")
            events = [event async for event in turn]
            return session, events, await runtime.messages(session.session_id)

    session, events, messages = asyncio.run(scenario())
    kinds = [type(event).__name__ for event in events]
    assert kinds[0] == "ToolStarted" and kinds[1] == "ToolFinished" and kinds[-1] == "TurnEnded"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Planned it."
    started, finished, ended = events[0], events[1], events[-1]
    assert isinstance(started, ToolStarted) and started.tool == "todo"
    assert (
        isinstance(finished, ToolFinished) and finished.ok and finished.call_id == started.call_id
    )
    assert isinstance(ended, TurnEnded) and ended.ok and ended.reply == "Planned it."
    assert ended.usage.input_tokens >= 30 and ended.tool_calls == 1
    assert session.title == "t" and session.source == "test"
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_calls[0]["name"] == "todo"


def test_one_turn_at_a_time_and_unknown_sessions_are_refused(home, openai_server):
    openai_server.queue(Reply.say("slow", delay_seconds=1.0))

    async def scenario():
        async with open_runtime(home) as runtime:
            with pytest.raises(SessionNotFound, match="no session 'nope'"):
                runtime.start_turn("nope", "hi")
            with pytest.raises(SessionNotFound):
                await runtime.resume_session("nope")
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "one")
            assert runtime.running(session.session_id) is turn
            with pytest.raises(SessionBusy):
                runtime.start_turn(session.session_id, "two")
            assert (await turn.result()).reply == "slow"
            assert runtime.running(session.session_id) is None

    asyncio.run(scenario())


def test_a_stop_ends_the_turn_keeping_what_was_said(home, openai_server):
    openai_server.queue(Reply.say("word " * 400, chunk_delay_seconds=0.05))  # ~25 s unstopped

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "long story")
            async for event in turn:
                if isinstance(event, TextDelta):
                    turn.stop()
                    break
            return await asyncio.wait_for(turn.result(), 15)  # a hang guard, not a figure

    ended = asyncio.run(scenario())
    assert ended.status == "stopped"
    assert ended.reply.startswith("word") and len(ended.reply) < 2000  # cut short


@pytest.mark.parametrize("answer", ["once", "deny", None])
def test_a_question_is_answered_by_the_front_end(home, openai_server, answer):
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./scratch"}), Reply.say("ok")
    )

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "go", answers_questions=True)
            asked = []
            async for event in turn:
                if isinstance(event, Question):
                    asked.append(event)
                    assert not event.answer("bogus")  # not a choice
                    if answer is None:
                        event.decline()
                    else:
                        assert event.answer(answer)
                        assert not event.answer(answer)  # answered already
            return asked

    asked = asyncio.run(scenario())
    assert len(asked) == 1 and asked[0].kind == "approval"
    assert asked[0].command == "chmod -R 777 ./scratch"
    assert [c.value for c in asked[0].choices] == ["once", "session", "command", "always", "deny"]
    (result,) = [
        m["content"] for m in openai_server.requests[1].json["messages"] if m["role"] == "tool"
    ]
    if answer == "once":
        assert result.startswith("exit code 0")
    else:  # denied, or declined without a choice: no
        assert "the user denied this command" in result


def test_nobody_to_ask_is_denied_and_says_so(home, openai_server):
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./scratch"}), Reply.say("ok")
    )

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            events = [e async for e in runtime.start_turn(session.session_id, "go")]
            return events

    events = asyncio.run(scenario())
    assert not any(isinstance(e, Question) for e in events)
    (result,) = [
        m["content"] for m in openai_server.requests[1].json["messages"] if m["role"] == "tool"
    ]
    assert "nobody can approve it here (this front-end has nobody to ask)" in result


def test_sessions_are_listed_searched_and_resumed(home, openai_server):
    openai_server.queue(Reply.say("The capital is Paris."), Reply.say("Still Paris."))

    async def scenario():
        async with open_runtime(home) as runtime:
            mine = await runtime.open_session(SessionOptions(source="test", user_scope="test:ann"))
            await runtime.start_turn(mine.session_id, "capital of France?").result()
            other = await runtime.open_session(SessionOptions(source="other"))
        async with open_runtime(home) as runtime:  # a new process: the store has it all
            listed = await runtime.sessions(source="test")
            scoped = await runtime.sessions(user_scope="test:ann")
            hits = await runtime.search(HistoryQuery(text="Paris"), user_scope="test:ann")
            strangers = await runtime.search(HistoryQuery(text="Paris"), user_scope="test:bob")
            await runtime.resume_session(mine.session_id)
            again = await runtime.start_turn(mine.session_id, "and now?").result()
            return mine, other, listed, scoped, hits, strangers, again

    mine, other, listed, scoped, hits, strangers, again = asyncio.run(scenario())
    assert [s.session_id for s in listed] == [mine.session_id]
    assert [s.session_id for s in scoped] == [mine.session_id]
    assert hits and hits[0].session_id == mine.session_id and not strangers
    assert again.reply == "Still Paris."
    assert "capital of France?" in str(openai_server.requests[-1].json["messages"])
    assert other.session_id not in {s.session_id for s in listed}


def test_toolsets_narrow_a_sessions_tools_and_unknown_ones_are_refused(home, openai_server):
    openai_server.queue(Reply.say("ok"))

    async def scenario():
        async with open_runtime(home) as runtime:
            with pytest.raises(ValueError, match="toolset 'nope' is not installed"):
                await runtime.open_session(SessionOptions(source="test", toolsets=("nope",)))
            with pytest.raises(ValueError, match="no-such-provider"):
                await runtime.open_session(
                    SessionOptions(source="test", provider="no-such-provider")
                )
            session = await runtime.open_session(SessionOptions(source="test", toolsets=("todo",)))
            await runtime.start_turn(session.session_id, "hi").result()

    asyncio.run(scenario())
    tools = [t["function"]["name"] for t in openai_server.requests[0].json.get("tools", [])]
    assert tools == ["todo"]


def test_delivery_without_a_gateway_says_how_to_get_one(home):
    async def scenario():
        async with open_runtime(home) as runtime:
            with pytest.raises(DeliveryUnavailable, match="hermes gateway run"):
                await runtime.deliver("telegram", "42", "hello")
            with pytest.raises(DeliveryUnavailable, match="no platform 'pigeon'"):
                await runtime.deliver("pigeon", "42", "hello")

    asyncio.run(scenario())


def test_models_lists_the_configured_model_first(home):
    async def scenario():
        async with open_runtime(home) as runtime:
            return list(runtime.models())

    models = asyncio.run(scenario())
    assert models[0].model == "test-model" and models[0].default


def test_a_reply_cut_off_and_asked_again_says_the_text_so_far_is_void(home, openai_server):
    config = home / "config.yaml"
    config.write_text(config.read_text().replace("retries: 1", "retries: 2"))
    openai_server.queue(Reply.cut("Half of a first try that", after_chunks=3), Reply.say("Whole."))

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            return [e async for e in runtime.start_turn(session.session_id, "hi")]

    events = asyncio.run(scenario())
    deltas = [e for e in events if isinstance(e, TextDelta)]
    restarts = [i for i, e in enumerate(deltas) if e.restarted]
    assert len(restarts) == 1 and restarts[0] > 0  # after the first try's text
    assert "".join(d.text for d in deltas[restarts[0] + 1 :]) == "Whole."
    assert events[-1].reply == "Whole."


def test_a_compaction_in_a_front_ends_turn_is_a_notice_and_the_view_persists(home, openai_server):
    from hermes_sdk.runtime import Notice

    long = " ".join(f"w{i}" for i in range(1500))
    config = home / "config.yaml"
    config.write_text(config.read_text() + "skills:\n  index_chars: 500\n")  # a small index

    async def measure() -> int:  # the system prompt and every installed tool's schema
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            return (await runtime.start_turn(session.session_id, "hi").result()).usage.input_tokens

    openai_server.respond = lambda body: Reply.say("ok")
    base, words = asyncio.run(measure()), len(long) // 4
    # The first turn (the base and 1,500 words) fits under 0.75 of this window; the second
    # (twice the words) does not, and does once the first exchange is a summary. Measured,
    # so the test holds however many tools the installed plugins add.
    window = int((base + 1.25 * words) / 0.75)
    config.write_text(
        config.read_text().replace(
            "default: test-model\n", f"default: test-model\n  context_length: {window}\n"
        )
    )
    summarizer = "You write the working memory of an AI agent"

    def respond(body: dict) -> Reply:
        if summarizer in str(body["messages"][0]["content"]):
            return Reply.say("SUMMARY: two long messages.")
        return Reply.say("ok")

    openai_server.respond = respond

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            first = [e async for e in runtime.start_turn(session.session_id, long)]
            second = [e async for e in runtime.start_turn(session.session_id, long + " again")]
            return first, second

    first, second = asyncio.run(scenario())
    assert not [e for e in first if isinstance(e, Notice)]
    notices = [e.text for e in second if isinstance(e, Notice)]
    assert any(text.startswith("compacted 2 earlier messages") for text in notices), second
    assert isinstance(second[-1], TurnEnded) and second[-1].ok


# --- for front-ends that serve many people (a gateway) -----------------------------------


def test_a_session_busy_in_another_process_ends_the_turn_as_busy(home, openai_server):
    from hermes_plugin_store_sqlite import state_db_path
    from hermes_plugin_store_sqlite.database import Database

    from hermes_kernel.store.state import StateStore

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            other = StateStore(
                Database(state_db_path(home))
            )  # another process's turn holds the lease
            try:
                with other.leases.holding(session.session_id):
                    ended = await runtime.start_turn(session.session_id, "hi").result()
            finally:
                other.close()
            return ended, await runtime.messages(session.session_id)

    ended, messages = asyncio.run(scenario())
    assert ended.status == "busy" and not ended.ok
    assert "is busy: a turn is running in" in (ended.error or "")
    assert messages == [] and openai_server.requests == []  # nothing was done or saved


def test_compact_says_why_not_and_refuses_an_unknown_session(home, openai_server):
    openai_server.queue(Reply.say("short"))

    async def scenario():
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            await runtime.start_turn(session.session_id, "hi").result()
            why_not = await runtime.compact(session.session_id, "the plan")
            with pytest.raises(SessionNotFound):
                await runtime.compact("no-such-session")
            return why_not

    assert "nothing to compact" in (asyncio.run(scenario()) or "")


def test_warm_up_before_serving_answers_with_warnings_only(home):
    async def scenario():
        async with open_runtime(home) as runtime:
            return await runtime.warm_up("test")

    assert asyncio.run(scenario()) == []


def test_a_plugins_tables_are_migrated_once_and_shared_with_other_connections(home):
    from hermes_sdk.storage import StoreError, StoreSchema, open_store

    first = StoreSchema(
        name="notes", migrations=("CREATE TABLE notes_items (id INTEGER PRIMARY KEY, text TEXT)",)
    )
    second = StoreSchema(
        name="notes", migrations=(*first.migrations, "ALTER TABLE notes_items ADD COLUMN at REAL")
    )

    async def scenario():
        async with open_runtime(home) as runtime:
            store = runtime.plugin_store(first)
            assert runtime.plugin_store(first) is store  # migrated once per runtime

            def add(text: str) -> None:
                with store.write(durable=True) as cursor:
                    cursor.execute("INSERT INTO notes_items (text) VALUES (?)", (text,))

            await store.run(add, "from the runtime")
            await store.synced()
            store.close()  # the runtime's own: it stays open with the runtime
            return store.query_value("SELECT count(*) FROM notes_items")

    assert asyncio.run(scenario()) == 1
    with open_store(home, second) as upgraded:  # a connection of its own, one migration more
        assert upgraded.query("SELECT text, at FROM notes_items") == [("from the runtime", None)]
    with pytest.raises(StoreError, match="newer than the installed plugin understands"):
        open_store(home, first)


def test_delivery_with_no_delivery_plugin_installed_says_so(home, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "delivery")

    async def scenario():
        async with open_runtime(home) as runtime:
            await runtime.deliver("telegram", "42", "hello")

    with pytest.raises(DeliveryUnavailable, match="no installed plugin delivers messages"):
        asyncio.run(scenario())


def test_describing_a_model_again_and_again_builds_its_clients_once(home):
    """A web page describes its session's model on every view: the runtime must not build
    (and keep) model clients each time."""

    async def scenario() -> None:
        async with open_runtime(home) as runtime:
            default = runtime.describe_model()
            for _ in range(20):
                named = runtime.describe_model(default.provider, "other-model")
            assert (named.provider, named.model) == (default.provider, "other-model")
            assert len(runtime._setups) == 1  # type: ignore[attr-defined]  # the kernel's own
            with pytest.raises(ValueError, match="nowhere"):
                runtime.describe_model("nowhere", "x")

    asyncio.run(scenario())


def test_slash_commands_refuse_what_the_asker_or_the_moment_does_not_allow(home, openai_server):
    """The runtime, not each front-end, holds the lines: a person on a platform cannot run
    an owner's command, a command that changes the session waits for the running turn, and
    /model before the first message starts from the model the front-end chose."""
    openai_server.queue(Reply.say("word " * 400, chunk_delay_seconds=0.05))

    async def scenario() -> dict[str, object]:
        said: dict[str, object] = {}
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            sid = session.session_id
            for name in ("model", "yolo", "tools"):
                with pytest.raises(PermissionError, match=f"/{name} is for the terminal"):
                    await runtime.run_slash(name, "", sid, user_scope="telegram:42")
            said["usage on a platform"] = (
                await runtime.run_slash("usage", "", sid, user_scope="telegram:42")
            ).text
            turn = runtime.start_turn(sid, "long story")
            async for event in turn:
                if isinstance(event, TextDelta):
                    break
            with pytest.raises(SessionBusy, match="/undo waits for the turn"):
                await runtime.run_slash("undo", "", sid)
            said["usage during the turn"] = (await runtime.run_slash("usage", "", sid)).text
            said["stop"] = await runtime.run_slash("stop", "", sid)
            await asyncio.wait_for(turn.result(), 15)
            chosen = await runtime.run_slash("model", "", None, route=("local-endpoint", "m2"))
            said["model before a session"] = chosen.text
        return said

    said = asyncio.run(scenario())
    assert "0 messages" in str(said["usage on a platform"])
    assert str(said["usage during the turn"]).startswith("session ")
    stop = said["stop"]
    assert getattr(stop, "stopped", False) and str(stop) == "stopping…"
    assert str(said["model before a session"]).startswith("model: local-endpoint / m2")


def test_reasoning_set_in_the_conversation_reaches_the_next_request(home, openai_server):
    """``/reasoning`` is the session's own, before config.yaml's, from its next turn;
    ``/reasoning default`` gives config.yaml's back; a word that is not an effort is one
    line and changes nothing."""
    config = home / "config.yaml"
    text = config.read_text().replace("  default: test-model\n", "  default: o4-mini\n")
    config.write_text(text.replace("model:\n", "model:\n  reasoning_effort: low\n", 1))
    openai_server.respond = lambda _body: Reply.say("thought")

    async def scenario() -> list[str]:
        said = []
        async with open_runtime(home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            sid = session.session_id
            said.append((await runtime.run_slash("reasoning", "", sid)).text)
            await runtime.start_turn(sid, "one").result()
            said.append((await runtime.run_slash("reasoning", "xhigh", sid)).text)
            said.append((await runtime.run_slash("reasoning", "extreme", sid)).text)
            await runtime.start_turn(sid, "two").result()
            said.append((await runtime.run_slash("reasoning", "", sid)).text)
            said.append((await runtime.run_slash("reasoning", "default", sid)).text)
            await runtime.start_turn(sid, "three").result()
        return said

    said = asyncio.run(scenario())
    assert said == [
        "reasoning effort: low (config.yaml); set it with /reasoning "
        "none|minimal|low|medium|high|xhigh, or /reasoning default",
        "reasoning effort xhigh for this conversation, from the next message",
        "reasoning effort must be one of none, minimal, low, medium, high, xhigh (or default), "
        "not 'extreme'",
        "reasoning effort: xhigh (this conversation); set it with /reasoning "
        "none|minimal|low|medium|high|xhigh, or /reasoning default",
        "reasoning effort back to low (config.yaml)",
    ]
    sent = [request.json.get("reasoning_effort") for request in openai_server.requests]
    assert sent[-3:] == ["low", "xhigh", "low"]
