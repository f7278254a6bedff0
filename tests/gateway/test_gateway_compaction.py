"""Compaction in the gateway: its safety net, and /compact from a chat."""

from __future__ import annotations

from hermes_testkit import Reply

from .conftest import OWNER

SUMMARIZER = "You write the working memory of an AI agent"


def words(label: str, count: int) -> str:
    return " ".join(f"{label}{i}" for i in range(count))


def summaries(openai_server) -> list[dict]:
    return [
        r.json
        for r in openai_server.requests
        if SUMMARIZER in str(r.json["messages"][0]["content"])
    ]


def answer_everything(openai_server) -> None:
    answered = []

    def respond(body: dict) -> Reply:
        if SUMMARIZER in str(body["messages"][0]["content"]):
            return Reply.say("SUMMARY: the user sent numbered words.")
        answered.append(body)
        return Reply.say(f"answer {len(answered)}")

    openai_server.respond = respond


def test_the_safety_net_compacts_even_with_automatic_compaction_off(
    telegram, openai_server, running_gateway
):
    answer_everything(openai_server)
    gateway = running_gateway(
        model="  context_length: 20000\n", top="compression:\n  enabled: false\n"
    )
    telegram.user_says(OWNER, words("alpha", 3500))
    telegram.wait_for_message(OWNER, "answer 1")
    assert not summaries(openai_server)
    telegram.user_says(OWNER, words("beta", 3500))
    telegram.wait_for_message(OWNER, "answer 2")
    assert len(summaries(openai_server)) == 1  # at 85% of the window, before the call
    (session,) = gateway.sessions("telegram")
    (record,) = gateway.compactions(session.id)
    assert record.reason == "unattended"
    last = openai_server.requests[-1].json["messages"]
    assert "SUMMARY: the user sent numbered words." in last[1]["content"]
    assert "alpha0" not in str(last)


def test_compact_from_the_chat(telegram, openai_server, running_gateway):
    answer_everything(openai_server)
    running_gateway()
    telegram.user_says(OWNER, "/compact")
    telegram.wait_for_message(OWNER, "nothing to compact: this conversation starts")
    telegram.user_says(OWNER, "remember PLUM " + words("alpha", 400))
    telegram.wait_for_message(OWNER, "answer 1")
    telegram.user_says(OWNER, "and this")
    telegram.wait_for_message(OWNER, "answer 2")
    telegram.user_says(OWNER, "/compact the fruit")
    reply = telegram.wait_for_message(OWNER, "compacted 2 earlier messages")
    assert "the full transcript is kept" in reply.visible
    (summary,) = summaries(openai_server)
    assert "keep above all: the fruit" in summary["messages"][0]["content"]
    assert "remember PLUM" in summary["messages"][1]["content"]
    telegram.user_says(OWNER, "/compact")
    telegram.wait_for_message(OWNER, "not compacted: nothing to compact")
