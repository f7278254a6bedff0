"""The official ``openai`` client against the API server: replies streamed and not, through a
turn that runs a tool; keys; sessions; errors in the bodies the client parses."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import openai
import pytest

from hermes_testkit import Reply, ScriptedOpenAIServer

SESSION = "X-Hermes-Session-Id"
KEY = "sk-test-0123456789abcdef"  # the api fixture's key (conftest)
Running = Any  # conftest.Running: the server, its loop and home


def client(api: Running, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=api.base_url, api_key=key, max_retries=0, timeout=60)


def tool_round(server: ScriptedOpenAIServer) -> None:
    """A turn that runs a tool (todo: no backend needed), then answers."""
    server.queue(
        Reply.tool_call("todo", {"todos": [{"id": "1", "content": "check", "status": "pending"}]}),
        Reply.say("All planned."),
    )


def test_a_reply_not_streamed_through_a_tool_turn(api: Running, openai_server) -> None:
    tool_round(openai_server)
    raw = client(api).chat.completions.with_raw_response.create(
        model="hermes", messages=[{"role": "user", "content": "plan it"}]
    )
    reply = raw.parse()
    assert reply.choices[0].message.content == "All planned."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens > 0
    assert raw.headers[SESSION]
    assert len(openai_server.requests) == 2  # the tool round, then the answer
    assert openai_server.requests[1].json["messages"][-1]["role"] == "tool"
    extension = reply.model_extra["hermes"]
    assert extension["tools"][0]["tool"] == "todo" and extension["tools"][0]["ok"]


def test_a_reply_streamed_through_a_tool_turn(api: Running, openai_server) -> None:
    tool_round(openai_server)
    stream = client(api).chat.completions.create(
        model="hermes",
        messages=[{"role": "user", "content": "plan it"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "All planned."
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["stop"]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert len({c.id for c in chunks}) == 1


def test_tool_events_are_an_extension_asked_for(api: Running, openai_server) -> None:
    tool_round(openai_server)
    with httpx.stream(
        "POST",
        f"{api.base_url}/chat/completions",
        json={"model": "hermes", "stream": True, "messages": [{"role": "user", "content": "go"}]},
        headers={"Authorization": f"Bearer {KEY}", "X-Hermes-Tool-Events": "1"},
        timeout=60,
    ) as response:
        body = response.read().decode()
    assert '"type": "tool_started"' in body and '"type": "tool_finished"' in body
    assert body.rstrip().endswith("data: [DONE]")


def test_a_wrong_or_missing_key_is_refused(api: Running, openai_server) -> None:
    with pytest.raises(openai.AuthenticationError) as raised:
        client(api, key="sk-wrong").chat.completions.create(
            model="hermes", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.code == "invalid_api_key"
    assert KEY not in str(raised.value)
    response = httpx.get(f"{api.base_url}/models", timeout=10)
    assert response.status_code == 401
    assert not openai_server.requests  # nothing reached the model


def test_two_requests_with_one_session_id_continue_one_session(api: Running, openai_server) -> None:
    openai_server.queue(Reply.say("Noted: blue."), Reply.say("You said blue."))
    api_client = client(api)
    first = api_client.chat.completions.with_raw_response.create(
        model="hermes", messages=[{"role": "user", "content": "My colour is blue."}]
    )
    session = first.headers[SESSION]
    second = api_client.chat.completions.with_raw_response.create(
        model="hermes",
        messages=[{"role": "user", "content": "What colour?"}],
        extra_headers={SESSION: session},
    )
    assert second.headers[SESSION] == session
    assert second.parse().choices[0].message.content == "You said blue."
    sent = openai_server.requests[1].json["messages"]
    assert [m["content"] for m in sent if m["role"] in {"user", "assistant"}] == [
        "My colour is blue.",
        "Noted: blue.",
        "What colour?",
    ]


def test_the_same_user_continues_and_others_do_not(api: Running, openai_server) -> None:
    openai_server.queue(Reply.say("a"), Reply.say("b"), Reply.say("c"))
    api_client = client(api)
    ids = [
        api_client.chat.completions.with_raw_response.create(
            model="hermes", user=user, messages=[{"role": "user", "content": "hi"}]
        ).headers[SESSION]
        for user in ("alice", "alice", "bob")
    ]
    assert ids[0] == ids[1] != ids[2]


def test_a_new_session_gets_the_clients_earlier_conversation(api: Running, openai_server) -> None:
    openai_server.queue(Reply.say("ok"))
    client(api).chat.completions.create(
        model="hermes",
        messages=[
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Bonjour"},
            {"role": "user", "content": [{"type": "text", "text": "How are you?"}]},
        ],
    )
    said = openai_server.requests[0].json["messages"][-1]["content"]
    assert "Answer in French." in said and "Bonjour" in said and said.endswith("How are you?")


def test_models_lists_the_agent_and_picks_a_configured_model(api: Running, openai_server) -> None:
    api_client = client(api)
    names = [model.id for model in api_client.models.list()]
    assert names[0] == "hermes" and any(name.startswith("hermes/") for name in names)
    with pytest.raises(openai.NotFoundError) as raised:
        api_client.chat.completions.create(
            model="gpt-nonexistent", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.code == "model_not_found"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": "hermes", "messages": []}, "non-empty list"),
        (
            {"model": "hermes", "messages": [{"role": "assistant", "content": "x"}]},
            "no user message",
        ),
        ({"model": "hermes", "messages": "hi"}, "non-empty list"),
    ],
)
def test_bad_requests_are_400_with_what_to_fix(api: Running, body, message) -> None:
    response = httpx.post(
        f"{api.base_url}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def test_an_unknown_session_is_404(api: Running) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client(api).chat.completions.create(
            model="hermes",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={SESSION: "no-such-session"},
        )
    assert raised.value.code == "session_not_found"


def test_a_busy_session_is_409_and_other_sessions_run_meanwhile(
    api: Running, openai_server
) -> None:
    openai_server.queue(Reply.say("first"))
    api_client = client(api)
    session = api_client.chat.completions.with_raw_response.create(
        model="hermes", user="carol", messages=[{"role": "user", "content": "one"}]
    ).headers[SESSION]
    openai_server.queue(Reply.say("slow", delay_seconds=2.0), Reply.say("other"))
    results: dict[str, str | None] = {}

    def slow() -> None:
        reply = api_client.chat.completions.create(
            model="hermes",
            messages=[{"role": "user", "content": "two"}],
            extra_headers={SESSION: session},
        )
        results["slow"] = reply.choices[0].message.content

    thread = threading.Thread(target=slow)
    thread.start()
    deadline = time.monotonic() + 10
    while len(openai_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    with pytest.raises(openai.ConflictError) as raised:
        api_client.chat.completions.create(
            model="hermes",
            messages=[{"role": "user", "content": "three"}],
            extra_headers={SESSION: session},
        )
    assert raised.value.code == "session_busy"
    other = api_client.chat.completions.create(
        model="hermes", user="dave", messages=[{"role": "user", "content": "meanwhile"}]
    )
    assert other.choices[0].message.content == "other"
    assert "slow" not in results  # answered while the slow one still ran
    thread.join(30)
    assert results["slow"] == "slow"


def test_a_dangerous_command_is_denied_over_the_api(api: Running, openai_server) -> None:
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "chmod -R 777 ."}), Reply.say("I could not.")
    )
    reply = client(api).chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "open up permissions"}]
    )
    assert reply.choices[0].message.content == "I could not."
    (result,) = [
        m["content"] for m in openai_server.requests[1].json["messages"] if m["role"] == "tool"
    ]
    assert "nobody can approve it here" in result and "approvals.allow" in result


def test_cors_lets_configured_origins_in_and_no_others(
    api_with_cors: Running, api: Running
) -> None:
    def preflight(running: Running, origin: str) -> httpx.Response:
        return httpx.options(
            f"{running.base_url}/chat/completions",
            headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
            timeout=10,
        )

    allowed = preflight(api_with_cors, "https://ui.example")
    assert allowed.status_code == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://ui.example"
    assert "Authorization" in allowed.headers["Access-Control-Allow-Headers"]
    assert preflight(api_with_cors, "https://evil.example").status_code == 403
    assert preflight(api, "https://ui.example").status_code == 403  # none configured
    listed = httpx.get(
        f"{api_with_cors.base_url}/models",
        headers={"Origin": "https://ui.example", "Authorization": f"Bearer {KEY}"},
        timeout=10,
    )
    assert listed.headers["Access-Control-Allow-Origin"] == "https://ui.example"
    refused = httpx.get(
        f"{api_with_cors.base_url}/models", headers={"Origin": "https://ui.example"}
    )
    assert refused.status_code == 401  # CORS never stands in for a key
