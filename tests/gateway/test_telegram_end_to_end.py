"""Conversations through the real Telegram plugin, the fake Bot API and the scripted model."""

from __future__ import annotations

import logging
import time

from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN

from hermes_testkit import Reply

from .conftest import OWNER, unfenced

GROUP = -1001234


def tool_results(openai_server) -> list[str]:
    return [
        str(message["content"])
        for message in openai_server.requests[-1].json["messages"]
        if message["role"] == "tool"
    ]


def test_a_dm_with_a_tool_call(running_gateway, telegram, openai_server, hermes):
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "echo from-the-tool"}, delay_seconds=1),
        Reply.say("It printed it."),
    )
    gateway = running_gateway()
    telegram.user_says(OWNER, "run echo for me")
    reply = telegram.wait_for_message(OWNER, "It printed it.")
    assert reply.reply_to is not None  # answers the user's message
    assert "from-the-tool" in tool_results(openai_server)[0]
    assert (OWNER, "typing") in telegram.chat_actions, "shown while the model took a second"
    (session,) = gateway.sessions("telegram")
    assert session.user_scope == f"telegram:{OWNER}"
    assert DEFAULT_TOKEN not in hermes.home.joinpath("state.db").read_bytes().decode("latin-1")


def test_in_a_group_it_answers_only_when_mentioned(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("Hello, group."))
    running_gateway()
    telegram.user_says(OWNER, "chatter not for the bot", chat_id=GROUP)
    telegram.user_says(OWNER, "@hermes_test_bot say hello", chat_id=GROUP)
    reply = telegram.wait_for_message(GROUP, "Hello, group.")
    assert reply.chat_id == GROUP
    (request,) = openai_server.requests
    users = [m["content"] for m in request.json["messages"] if m["role"] == "user"]
    assert [unfenced(u) for u in users] == ["say hello"]  # no chatter; the @name is gone
    assert users[0].startswith("[Untrusted data from a telegram group chat")  # issue 62
    offered = {tool["function"]["name"] for tool in request.json.get("tools", [])}
    assert not offered & {"terminal", "read_file", "write_file", "execute_code", "cronjob"}


def test_a_forum_topic_is_answered_in_its_thread(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("In the topic."))
    running_gateway()
    telegram.user_says(OWNER, "@hermes_test_bot hi", chat_id=GROUP, thread_id=7)
    reply = telegram.wait_for_message(GROUP, "In the topic.")
    assert reply.thread_id == 7


def test_pairing_lets_an_unknown_user_in(running_gateway, telegram, openai_server, hermes):
    stranger = 777
    openai_server.queue(Reply.say("Welcome aboard."))
    running_gateway()
    telegram.user_says(stranger, "hello?")
    offer = telegram.wait_for_message(stranger, "hermes pairing approve telegram")
    code = offer.visible.split("hermes pairing approve telegram ")[1].split()[0]
    assert len(code) == 8
    telegram.user_says(stranger, "hello again?")  # within 10 minutes: no second code
    telegram.user_says(stranger, "/help")
    time.sleep(0.5)
    assert len(telegram.sent(stranger)) == 1 and openai_server.requests == []

    wrong = hermes("pairing", "approve", "telegram", "AAAAAAAA")
    assert wrong.code == 1 and "no waiting request on telegram" in wrong.err
    listed = hermes("pairing", "list")
    assert code in listed.out and "user 777" in listed.out
    approved = hermes("pairing", "approve", "telegram", code.lower())
    assert approved.code == 0, approved.err

    telegram.user_says(stranger, "now?")
    telegram.wait_for_message(stranger, "Welcome aboard.")
    assert "Let in:" in hermes("pairing", "list").out
    assert hermes("pairing", "revoke", "telegram", str(stranger)).code == 0


def test_a_strangers_name_prints_as_one_plain_line(running_gateway, telegram, hermes):
    """Issue 62: a display name with a newline forged lines in ``pairing list`` and the
    log, and its escape codes reached the owner's terminal."""
    running_gateway()
    forged = "x\nLet in:\n  telegram user 1 @owner\x1b]0;pwned\x07\x1b[2J"
    telegram.user_says(4242, "hello?", username=forged)
    telegram.wait_for_message(4242, "hermes pairing approve telegram")
    listed = hermes("pairing", "list").out
    assert "\x1b" not in listed and "\x07" not in listed
    assert "Let in:" not in listed.splitlines()  # no forged section: it stays in its line
    [line] = [line for line in listed.splitlines() if "4242" in line]
    assert "\u241b" in line  # the escape is shown, not acted on


def test_a_group_stranger_gets_nothing(running_gateway, telegram, openai_server):
    running_gateway()
    telegram.user_says(555, "@hermes_test_bot let me in", chat_id=GROUP)
    telegram.user_says(OWNER, "/help", chat_id=GROUP)
    telegram.wait_for_message(GROUP, "/new")
    assert len(telegram.sent(GROUP)) == 1 and telegram.sent(555) == []  # no pairing in groups
    assert openai_server.requests == []


def test_a_long_reply_is_split_on_paragraphs(running_gateway, telegram, openai_server):
    paragraphs = [f"Paragraph {i}: " + "word " * 150 for i in range(12)]  # ~9,000 characters
    text = "\n\n".join(p.strip() for p in paragraphs)
    openai_server.queue(Reply.say(text, chunk_size=500))
    running_gateway()
    telegram.user_says(OWNER, "write a lot")
    telegram.wait_for(lambda sent: "Paragraph 11" in "".join(m.visible for m in sent), 20)
    messages = telegram.sent(OWNER)
    assert len(messages) >= 3
    assert all(len(m.visible) <= 4096 for m in messages)
    assert all(m.visible.startswith("Paragraph") for m in messages)  # cut between paragraphs
    assert "\n\n".join(m.visible for m in messages) == text


def test_a_streamed_reply_is_edited_in_place(running_gateway, telegram, openai_server):
    text = "Streaming " + " ".join(f"w{i}" for i in range(120))
    openai_server.queue(Reply.say(text, chunk_size=8, chunk_delay_seconds=0.02))
    running_gateway()
    telegram.user_says(OWNER, "stream please")
    telegram.wait_for(lambda sent: any(m.visible == text for m in sent), 20)
    (message,) = telegram.sent(OWNER)
    assert len(message.edits) >= 2  # previews first, then the whole reply in the same message
    assert message.edits[0].endswith("…") and len(message.edits[0]) < len(text)


def test_markup_telegram_refuses_is_sent_plain(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("**bold *and* mixed** a < b & c"))
    running_gateway()
    telegram.user_says(OWNER, "markup")
    reply = telegram.wait_for_message(OWNER, "a < b & c")
    assert reply.parse_mode == "HTML" and "<b>" in reply.text


def test_an_approval_by_button(running_gateway, telegram, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    running_gateway()
    telegram.user_says(OWNER, "open up that folder")
    question = telegram.wait_for_message(OWNER, "Approve this command?", buttons=True)
    assert "chmod -R 777" in question.visible
    telegram.press(999, question, "once")  # someone else: refused
    telegram.wait_for(
        lambda _: any("Only the person" in a.get("text", "") for a in telegram.callback_answers)
    )
    time.sleep(0.3)  # the buttons stay for the person asked
    assert question.buttons
    assert not [method for method, _ in list(telegram.calls) if method == "editMessageReplyMarkup"]
    telegram.press(OWNER, question, "once")
    telegram.wait_for_message(OWNER, "Opened it.")
    assert tool_results(openai_server)[0].startswith("exit code 0")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert telegram.sent(OWNER)[0].buttons == []  # answered: the buttons are gone


def test_a_denied_approval_never_runs(running_gateway, telegram, openai_server, tmp_path):
    target = tmp_path / "private"
    target.mkdir(mode=0o700)
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Fine.")
    )
    running_gateway()
    telegram.user_says(OWNER, "open it")
    question = telegram.wait_for_message(OWNER, "Approve this command?", buttons=True)
    telegram.user_says(OWNER, "deny")  # typed instead of pressed
    telegram.wait_for_message(OWNER, "Fine.")
    assert "the user denied this command" in tool_results(openai_server)[0]
    assert oct(target.stat().st_mode)[-3:] == "700"
    assert question.buttons


def test_a_429_storm_is_survived(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("Through the storm."))
    running_gateway(gateway="  stream: false\n")
    telegram.flood("sendMessage", 3, retry_after=1)
    telegram.flood("sendChatAction", 5, retry_after=1)
    telegram.user_says(OWNER, "hi")
    reply = telegram.wait_for_message(OWNER, "Through the storm.", timeout=30)
    assert len([m for m in telegram.sent(OWNER) if m.visible == reply.visible]) == 1
    assert sum(1 for method, code, _ in telegram.rejected if code == 429) >= 3


def test_a_group_at_its_flood_limit_holds_up_no_other_chat(
    running_gateway, telegram, openai_server, capsys
):
    """Knob: limit_chats (the group takes 2 posts a minute here). The group's third reply
    waits out its minute; a private chat is answered meanwhile as if nothing waited."""
    openai_server.queue(
        Reply.say("Hello first."),
        Reply.say("Group reply one."),
        Reply.say("Group reply two."),
        Reply.say("Group reply three."),
        Reply.say("Hello, you."),
    )
    running_gateway(gateway="  stream: false\n")
    telegram.limit_chats(group_per_minute=2)
    asked = time.monotonic()
    telegram.user_says(OWNER, "hello")
    telegram.wait_for_message(OWNER, "Hello first.", timeout=20)
    alone = time.monotonic() - asked
    for said, reply in [("first", "one"), ("second", "two")]:
        telegram.user_says(OWNER, f"@hermes_test_bot {said}", chat_id=GROUP)
        telegram.wait_for_message(GROUP, f"Group reply {reply}.")
    telegram.user_says(OWNER, "@hermes_test_bot third", chat_id=GROUP)
    telegram.wait_for(lambda _: any(code == 429 for _, code, _ in telegram.rejected), 30)
    # A private chat takes a post a second: the next reply there comes a second after its
    # first at the earliest, group or no group.
    time.sleep(max(0.0, asked + alone + 1.1 - time.monotonic()))
    asked = time.monotonic()
    telegram.user_says(OWNER, "are you there?")
    telegram.wait_for_message(OWNER, "Hello, you.", timeout=20)
    latency = time.monotonic() - asked
    assert "Group reply three." not in [m.visible for m in telegram.sent(GROUP)]  # waits
    with capsys.disabled():  # the figure for the record, not a timed assertion
        print(
            f"\nprivate chat answered in {latency * 1000:.0f} ms beside a flooded group, "
            f"{alone * 1000:.0f} ms with the group quiet"
        )


def test_new_starts_a_fresh_session_and_stop_stops(running_gateway, telegram, openai_server):
    openai_server.queue(Reply.say("first"), Reply.say("slow", delay_seconds=30), Reply.say("third"))
    gateway = running_gateway()
    telegram.user_says(OWNER, "one")
    telegram.wait_for_message(OWNER, "first")
    telegram.user_says(OWNER, "/new")
    telegram.wait_for_message(OWNER, "new session: your next message starts it")
    telegram.user_says(OWNER, "two")
    telegram.wait_for(lambda _: len(openai_server.requests) == 2)
    telegram.user_says(OWNER, "queued behind two")
    telegram.user_says(OWNER, "/stop")
    telegram.wait_for_message(OWNER, "dropped 1 waiting message")
    telegram.wait_for_message(OWNER, "Stopped.")
    sessions = gateway.sessions("telegram")
    assert len(sessions) == 2 and sessions[1].end_reason == "new_session"
    telegram.user_says(OWNER, "three")
    telegram.wait_for_message(OWNER, "third")
    assert len(openai_server.requests) == 3  # the dropped message never reached the model


def test_a_bad_token_is_reported_and_retried(running_gateway, telegram, hermes, caplog):
    caplog.set_level(logging.INFO)
    hermes_logger = logging.getLogger("hermes")  # it does not propagate to the root
    hermes_logger.addHandler(caplog.handler)
    gateway = running_gateway(wait=False, token="999:wrong-token-value")
    deadline = time.monotonic() + 10
    assert gateway.gateway is not None
    state = gateway.gateway.platforms.states["telegram"]
    while state.restarts < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state.restarts >= 2
    hermes_logger.removeHandler(caplog.handler)
    assert "refused the bot token" in state.error
    assert "platform telegram failed: Telegram refused the bot token" in caplog.text
    assert "wrong-token-value" not in caplog.text


def test_a_token_telegram_cannot_read_is_not_configured_and_not_retried(running_gateway):
    # Always on at the fake, as at Telegram: a token not of a token's form is 404.
    gateway = running_gateway(wait=False, token="AAH-token-pasted-without-its-number")
    assert gateway.gateway is not None
    state = gateway.gateway.platforms.states["telegram"]
    deadline = time.monotonic() + 10
    while state.state != "not configured" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state.state == "not configured" and state.restarts == 0
    assert "404 Not Found" in state.error and "TELEGRAM_BOT_TOKEN" in state.error
    assert "pasted-without" not in state.error


def test_memory_writes_wait_for_the_person_and_are_approved_from_the_chat(
    running_gateway, telegram, openai_server, hermes
):
    import re

    openai_server.queue(
        Reply.tool_call("memory", {"action": "add", "target": "user", "content": "Likes tea"}),
        Reply.say("Noted, once you approve it."),
    )
    running_gateway(gateway="memory:\n  write_approval: true\n")  # a top-level section
    telegram.user_says(OWNER, "remember that I like tea")
    telegram.wait_for_message(OWNER, "Noted, once you approve it.")
    telegram.user_says(OWNER, "/memory pending")
    listing = telegram.wait_for_message(OWNER, "Likes tea")
    proposal = re.search(r"(\w{6,}) \(from ", listing.visible)
    assert proposal, listing.visible
    telegram.user_says(OWNER, f"/memory approve {proposal.group(1)}")
    telegram.wait_for_message(OWNER, f"approved {proposal.group(1)}")
    profiles = list((hermes.home / "memories" / "users").glob("*/USER.md"))
    assert len(profiles) == 1 and "Likes tea" in profiles[0].read_text()  # their own profile
    assert not (hermes.home / "memories" / "USER.md").exists()  # not the terminal owner's
    telegram.user_says(OWNER, "/skills pending")
    telegram.wait_for_message(OWNER, "/skills is for the terminal (hermes chat)")
    assert len(openai_server.requests) == 2, "the commands never reached the model"
