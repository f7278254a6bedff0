"""kill -9 and clean stops of a real ``hermes gateway run`` process: a reply that was ready
arrives exactly once, or twice with the duplicate note, never zero times; an interrupted
turn resumes once; a clean stop drains."""

from __future__ import annotations

import time

import pytest

from hermes_commons.sending import DUPLICATE_NOTE
from hermes_testkit import Reply

from .conftest import OWNER, polling, wait_until

NO_STREAM = "  stream: false\n  typing: false\n"
NOTE = DUPLICATE_NOTE.strip("↻ _").split(";")[0]  # the words the user reads


def finals(telegram) -> list[str]:
    return [m.visible for m in telegram.sent(OWNER) if "final answer" in m.visible]


@pytest.mark.parametrize("reached_telegram", [False, True])
def test_kill_between_reply_ready_and_delivered(
    gateway_process, telegram, openai_server, reached_telegram
):
    openai_server.queue(Reply.say("the final answer"))
    first = gateway_process(gateway=NO_STREAM)
    polling(telegram)
    with telegram.holding("sendMessage", "final answer", drop=not reached_telegram):
        telegram.user_says(OWNER, "question")
        wait_until(lambda: telegram.held("sendMessage") == 1)
        first.kill()  # the send is in flight: recorded as attempting, never confirmed
    wait_until(lambda: telegram.held("sendMessage") == 0)
    wait_until(lambda: len(finals(telegram)) == (1 if reached_telegram else 0))

    second = gateway_process(gateway=NO_STREAM)
    wait_until(lambda: len(finals(telegram)) == (2 if reached_telegram else 1))
    delivered = finals(telegram)
    assert NOTE in delivered[-1]  # the resent copy says it may be a duplicate
    assert len(openai_server.requests) == 1  # the turn was not run again
    time.sleep(1.5)  # the upkeep loop runs every second: nothing more is sent
    assert len(finals(telegram)) == len(delivered)
    assert second.terminate() == 0


def test_kill_mid_turn_resumes_it_once(gateway_process, telegram, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = gateway_process(gateway=NO_STREAM)
    polling(telegram)
    telegram.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()

    openai_server.queue(Reply.say("the final answer, after the restart"))
    second = gateway_process(gateway=NO_STREAM)
    wait_until(lambda: len(finals(telegram)) == 1)
    assert any("continuing" in m.visible for m in telegram.sent(OWNER))
    last_user = [m for m in openai_server.requests[-1].json["messages"] if m["role"] == "user"][-1]
    assert "Hermes restarted while working on this message" in last_user["content"]
    assert "do the long thing" in last_user["content"]
    assert second.terminate() == 0


def test_a_turn_interrupted_twice_is_reported_not_retried(gateway_process, telegram, openai_server):
    openai_server.queue(Reply.say("x", delay_seconds=30), Reply.say("y", delay_seconds=30))
    first = gateway_process(gateway=NO_STREAM)
    polling(telegram)
    telegram.user_says(OWNER, "fragile")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    second = gateway_process(gateway=NO_STREAM)
    wait_until(lambda: len(openai_server.requests) == 2)
    second.kill()
    third = gateway_process(gateway=NO_STREAM)
    telegram.wait_for_message(OWNER, "interrupted twice", timeout=20)
    assert len(openai_server.requests) == 2
    assert third.terminate() == 0


def test_a_clean_stop_lets_the_running_turn_finish(
    gateway_process, telegram, openai_server, hermes
):
    openai_server.queue(Reply.say("the final answer", delay_seconds=1.5))
    process = gateway_process(gateway=NO_STREAM)
    polling(telegram)
    status = hermes("gateway", "status")
    assert status.code == 0 and "telegram" in status.out
    telegram.user_says(OWNER, "finish this")
    wait_until(lambda: len(openai_server.requests) == 1)
    stopped = hermes("gateway", "stop")
    assert stopped.code == 0, stopped.err
    assert finals(telegram) == ["the final answer"]
    assert process.process.wait(5) == 0
    assert hermes("gateway", "status").code == 1
