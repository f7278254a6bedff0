"""/steer, /queue, /bg, /goal and /branch in a chat app: the runtime's same commands, through
the real Telegram plugin, the fake Bot API and the scripted model."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from hermes_sdk.runtime import REPORT_PREFIX, STEER_PREFIX, SessionOptions, open_runtime
from hermes_testkit import Reply
from tests.integration.conftest import Terminal, terminal_env

from .conftest import OWNER, unfenced, wait_until

GROUP = -1001234


def users(request) -> list[str]:
    return [unfenced(str(m["content"])) for m in request.json["messages"] if m["role"] == "user"]


def test_steer_reaches_the_running_turn(running_gateway, telegram, openai_server):
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "sleep 2; echo migrated"}),
        Reply.say("Migrated on staging."),
    )
    running_gateway()
    telegram.user_says(OWNER, "run the migration")
    wait_until(lambda: len(openai_server.requests) == 1)
    telegram.user_says(OWNER, "/steer use the staging database")
    telegram.wait_for_message(OWNER, "steering: use the staging database")
    telegram.wait_for_message(OWNER, "Migrated on staging.")
    second = openai_server.requests[1]
    assert users(second)[-1] == STEER_PREFIX + "use the staging database"
    assert [m["role"] for m in second.json["messages"]][-2:] == ["tool", "user"]


def test_background_tells_the_chat_when_it_is_done(running_gateway, telegram, openai_server):
    openai_server.queue(
        Reply.say("Hello."),
        Reply.say("The logs are quiet.", delay_seconds=2),
        Reply.say("Fine, thanks."),
    )
    gateway = running_gateway()
    telegram.user_says(OWNER, "hi")
    telegram.wait_for_message(OWNER, "Hello.")
    telegram.user_says(OWNER, "/bg summarise the logs")
    telegram.wait_for_message(OWNER, "started in the background as session")
    telegram.user_says(OWNER, "how are you?")
    telegram.wait_for_message(OWNER, "Fine, thanks.")
    done = telegram.wait_for_message(OWNER, "done: The logs are quiet.")
    (task,) = gateway.sessions("background")
    (chat,) = gateway.sessions("telegram")
    assert task.parent_session_id == chat.id
    assert task.user_scope == f"telegram:{OWNER}"  # the person's own, as their chat
    assert task.id in done.visible


def test_queue_and_goal_send_their_message_as_the_users(running_gateway, telegram, openai_server):
    openai_server.queue(
        Reply.say("Queued answer."),
        Reply.say("Half done."),
        Reply.say("CONTINUE: the second half"),
        Reply.say("All done."),
        Reply.say("DONE: finished"),
    )
    running_gateway()
    telegram.user_says(OWNER, "/queue what time is it?")
    telegram.wait_for_message(OWNER, "Queued answer.")
    assert users(openai_server.requests[0]) == ["what time is it?"]
    telegram.user_says(OWNER, "/goal tidy the notes")
    telegram.wait_for_message(OWNER, "goal set (20-turn budget)")
    telegram.wait_for_message(OWNER, "Half done.")  # a step of its own, as its own message
    telegram.wait_for_message(OWNER, "All done.")
    assert "Keep working towards the goal: tidy the notes" in users(openai_server.requests[3])[-1]
    telegram.wait_for_message(OWNER, "goal achieved: finished")  # a notice a chat hears


def test_a_goal_is_refused_where_the_words_are_others(running_gateway, telegram, openai_server):
    running_gateway()
    telegram.user_says(OWNER, "@hermes_test_bot /goal repeat this forever", chat_id=GROUP)
    telegram.wait_for_message(GROUP, "/goal is not offered here")
    assert not openai_server.requests


def test_branch_moves_the_chat_to_the_copy(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("One."), Reply.say("Two."), Reply.say("Other."))
    gateway = running_gateway()
    for word, answer in (("first", "One."), ("second", "Two.")):
        telegram.user_says(OWNER, word)
        telegram.wait_for_message(OWNER, answer)
    telegram.user_says(OWNER, "/branch 1")
    telegram.wait_for_message(OWNER, "branched into")
    telegram.user_says(OWNER, "second, another way")
    telegram.wait_for_message(OWNER, "Other.")
    assert users(openai_server.requests[-1]) == ["first", "second, another way"]
    wait_until(lambda: len(gateway.sessions("telegram")) == 2)


def test_handoff_from_the_terminal_to_telegram_and_back(running_gateway, telegram, openai_server):
    """A conversation started at the terminal (a runtime of its own, as `hermes chat` has)
    goes on in the owner's Telegram chat, and /handoff cli there says how to come back."""
    openai_server.queue(Reply.say("Noted: seven."), Reply.say("It was seven."))
    gateway = running_gateway()

    async def at_the_terminal() -> tuple[str, str]:
        async with open_runtime(gateway.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="cli"))
            ended = await runtime.start_turn(session.session_id, "remember seven").result()
            assert ended.reply == "Noted: seven."
            stranger = await runtime.run_slash(
                "handoff", "telegram", session.session_id, user_scope="telegram:99"
            )
            assert "only the owner" in stranger.text
            reply = await runtime.run_slash("handoff", "telegram", session.session_id)
            return session.session_id, reply.text

    session_id, said = asyncio.run(at_the_terminal())
    assert said.startswith(f"handed off: your next message in the telegram chat {OWNER}")
    telegram.user_says(OWNER, "which number was it?")
    telegram.wait_for_message(OWNER, "It was seven.")
    assert users(openai_server.requests[-1]) == ["remember seven", "which number was it?"]
    telegram.user_says(OWNER, "/handoff cli")
    back = telegram.wait_for_message(OWNER, "to go on in the terminal")
    assert f"hermes chat -r {session_id}" in back.visible


def test_handoff_from_a_real_chat_in_a_terminal(running_gateway, telegram, openai_server):
    """The same, typed in a real `hermes chat` in a pseudo-terminal on the gateway's home:
    the conversation goes on in Telegram with its history, and comes back by its id."""
    openai_server.queue(Reply.say("Noted: blue."), Reply.say("It was blue."), Reply.say("Back."))
    gateway = running_gateway()
    hermes = str(Path(sys.executable).parent / "hermes")
    term = Terminal([hermes, "chat"], terminal_env(gateway.home))
    try:
        term.wait_for("/help for commands", timeout=30)
        term.line("remember blue")
        term.wait_for("Noted: blue.")
        term.line("/handoff telegram")
        term.wait_for("handed off: your next message in the telegram chat")
        term.line("/quit")
        assert term.wait_exit() == 0
    finally:
        term.close()
    telegram.user_says(OWNER, "which colour?")
    telegram.wait_for_message(OWNER, "It was blue.")
    assert users(openai_server.requests[-1]) == ["remember blue", "which colour?"]
    telegram.user_says(OWNER, "/handoff cli")
    back = telegram.wait_for_message(OWNER, "to go on in the terminal")
    session_id = back.visible.split("hermes chat -r ")[1].split()[0]
    again = Terminal([hermes, "chat", "-r", session_id], terminal_env(gateway.home))
    try:
        again.wait_for("resumed", timeout=30)
        again.line("and now?")
        again.wait_for("Back.")
        assert users(openai_server.requests[-1]) == [
            "remember blue",
            "which colour?",
            "and now?",
        ]
        again.line("/quit")
        assert again.wait_exit() == 0
    finally:
        again.close()


def test_a_background_subagent_reports_back_in_the_chat(running_gateway, telegram, openai_server):
    """delegate_task in the background on a chat platform: the chat gets the handles' reply
    at once, chats on meanwhile, and the report comes back as a turn answered there;
    /agents lists the child."""

    def respond(body) -> Reply:
        said = users_of(body)
        if said[0].startswith("Survey the logs"):  # the child
            return Reply.say("The logs are quiet.", delay_seconds=3)
        last = said[-1]
        if last.startswith(REPORT_PREFIX):
            return Reply.say("Your subagent says the logs are quiet.")
        if last == "survey the logs in the background":
            if body["messages"][-1]["role"] == "tool":
                return Reply.say("Started a subagent on it.")
            return Reply.tool_call("delegate_task", {"tasks": [{"goal": "Survey the logs"}]})
        return Reply.say("Fine, thanks.")

    openai_server.respond = respond
    running_gateway()
    telegram.user_says(OWNER, "survey the logs in the background")
    telegram.wait_for_message(OWNER, "Started a subagent on it.")
    telegram.user_says(OWNER, "/agents")
    telegram.wait_for_message(OWNER, "d1 [running")
    telegram.user_says(OWNER, "how are you?")
    telegram.wait_for_message(OWNER, "Fine, thanks.")
    telegram.wait_for_message(OWNER, "Your subagent says the logs are quiet.", timeout=60)
    (report,) = [
        said
        for request in openai_server.requests
        for said in users_of(request.json)
        if said.startswith(REPORT_PREFIX)
    ]  # once, however many requests carried the conversation after
    assert "d1 (completed): Survey the logs" in report and "The logs are quiet." in report


def users_of(body) -> list[str]:
    return [unfenced(str(m["content"])) for m in body["messages"] if m["role"] == "user"]
