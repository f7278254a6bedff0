"""A mixture of agents through the whole agent (provider-moa): three scripted reference
models advise in parallel, the aggregator answers with their answers in its request, a
reference model that fails is one line and the answer still comes, each model's usage is
recorded as its own, ``/moa`` sends one message through a mixture, and a mixture written
wrong is one line to fix."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time

from hermes_plugin_provider_moa.mixture import ADVISOR_PROMPT

from hermes_sdk.runtime import SessionOptions, open_runtime
from hermes_testkit import Reply

ADVICE = {
    "ref-a": "Plan A: read the log first.",
    "ref-b": "Plan B: check the disk.",
    "ref-c": "Plan C: restart it.",
}
FINAL = "Check the disk, then restart the service."


def configure(hermes, openai_server, *, model: str = "council", extra: str = "") -> None:
    url = openai_server.base_url
    hermes.config(
        f"model:\n  provider: {model}\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n"
        "providers:\n"
        f"  a:\n    base_url: {url}\n    models: [ref-a]\n"
        f"  b:\n    base_url: {url}\n    models: [ref-b, other]\n"
        f"  c:\n    base_url: {url}\n    models: [ref-c]\n"
        f"  agg:\n    base_url: {url}\n    models: [agg-model]\n"
        "  council:\n    transport: moa\n"
        "    reference_models: [a, {provider: b, model: ref-b}, c]\n"
        "    aggregator: agg\n" + extra
    )


def respond(failing: frozenset[str] = frozenset(), slow: float = 0.0, arrived=None):
    def reply(body) -> Reply:
        model = body["model"]
        if arrived is not None:
            arrived[model] = time.monotonic()
        if model in failing:
            return Reply.error(500, "the reference model is down")
        if model in ADVICE:
            return Reply.say(ADVICE[model], delay_seconds=slow)
        return Reply.say(FINAL)

    return reply


def by_model(openai_server, model: str) -> list:
    return [r for r in openai_server.requests if r.json["model"] == model]


def test_three_references_advise_and_the_aggregator_answers_with_their_answers(
    hermes, openai_server
):
    configure(hermes, openai_server)
    arrived: dict[str, float] = {}
    openai_server.respond = respond(slow=1.0, arrived=arrived)
    result = hermes("chat", "-q", "The service is down. What now?", "--json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["reply"] == FINAL
    for model in ADVICE:
        (asked,) = by_model(openai_server, model)
        messages = asked.json["messages"]
        assert messages[0] == {"role": "system", "content": ADVISOR_PROMPT}
        assert "The service is down. What now?" in messages[-1]["content"]
        assert not asked.json.get("tools")  # advisers act on nothing
    (aggregated,) = by_model(openai_server, "agg-model")
    last = aggregated.json["messages"][-1]
    assert last["role"] == "user"
    assert last["content"].startswith("The service is down. What now?")
    for advice in ADVICE.values():
        assert advice in last["content"]
    assert aggregated.json.get("tools")  # the aggregator acts
    times = [arrived[model] for model in ADVICE]
    assert max(times) - min(times) < 0.9  # asked side by side: each answers after 1 s
    assert arrived["agg-model"] - max(times) >= 0.9  # the aggregator waited for them
    with sqlite3.connect(hermes.home / "state.db") as db:
        calls = db.execute(
            "SELECT provider, model FROM model_calls WHERE session_id = ?",
            (payload["session_id"],),
        ).fetchall()
    assert sorted(calls) == [("a", "ref-a"), ("agg", "agg-model"), ("b", "ref-b"), ("c", "ref-c")]
    assert "unknown key" not in result.err  # a mixture's keys are its transport's own


def test_a_reference_model_that_fails_is_one_line_and_the_answer_still_comes(hermes, openai_server):
    configure(hermes, openai_server)
    openai_server.respond = respond(failing=frozenset({"ref-c"}))
    result = hermes("chat", "-q", "What now?", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["reply"] == FINAL
    said = result.out + result.err
    assert "mixture: c failed:" in said
    (aggregated,) = by_model(openai_server, "agg-model")
    note = aggregated.json["messages"][-1]["content"]
    assert ADVICE["ref-a"] in note and ADVICE["ref-b"] in note
    assert "Answer 3, from c:\n[failed:" in note


def test_a_mixture_written_wrong_is_one_line_naming_the_key(hermes, openai_server):
    configure(hermes, openai_server, extra="    refrence_max_tokens: 100\n")
    result = hermes("chat", "-q", "hi")
    assert result.code != 0
    assert "providers.council: refrence_max_tokens: unknown key (did you mean " in result.err
    assert "reference_max_tokens" in result.err
    configure(hermes, openai_server)
    hermes.config(
        "model:\n  provider: council\nproviders:\n  council:\n    transport: moa\n"
        "    reference_models: [nowhere]\n    aggregator: nowhere\n"
    )
    result = hermes("chat", "-q", "hi")
    assert result.code != 0
    assert "providers.council: aggregator: " in result.err
    assert "nowhere" in result.err


def test_moa_sends_one_message_through_the_mixture_then_back(hermes, openai_server):
    configure(hermes, openai_server, model="agg")
    openai_server.respond = respond()

    async def main() -> tuple[str, str, str]:
        async with open_runtime(hermes.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            sid = session.session_id
            reply = await runtime.run_slash("moa", "What now?", sid)
            assert reply.send == "What now?"
            first = await runtime.start_turn(sid, reply.send).result()
            after_moa = len(openai_server.requests)
            second = await runtime.start_turn(sid, "And then?").result()
            asked_after = [r.json["model"] for r in openai_server.requests[after_moa:]]
            assert asked_after == ["agg-model"]  # back to the session's own model
            unknown = await runtime.run_slash("moa", "@nope hi", sid)
            return first.reply, second.reply, unknown.text

    first, second, unknown = asyncio.run(main())
    assert first == FINAL and second == FINAL
    assert {r.json["model"] for r in openai_server.requests} >= set(ADVICE)
    assert unknown == "no mixture 'nope' in providers: (council)"


def test_references_are_asked_once_per_message_with_fanout_per_turn(hermes, openai_server):
    configure(hermes, openai_server, extra="    fanout: per_turn\n")
    note = hermes.home / "note.txt"
    note.write_text("hello")
    done = threading.Event()

    def reply(body) -> Reply:
        if body["model"] in ADVICE:
            return Reply.say(ADVICE[body["model"]])
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply.tool_call("read_file", {"path": str(note)})
        done.set()
        return Reply.say(FINAL)

    openai_server.respond = reply
    result = hermes("chat", "-q", "Read note.txt", "--json")
    assert result.code == 0, result.err
    assert done.is_set()
    assert len(by_model(openai_server, "agg-model")) == 2  # a tool call, then the answer
    for model in ADVICE:
        assert len(by_model(openai_server, model)) == 1  # asked once for the message
