"""Conversations through the real Matrix plugin, a real Synapse and the scripted model."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hermes_plugin_platform_matrix.testing import EncryptingDevice, MatrixUser, Synapse

from hermes_testkit import Reply

from .conftest import RunningGateway, wait_until


@pytest.fixture
def matrix_gateway(
    hermes, openai_server, synapse: Synapse, tmp_path, monkeypatch
) -> Iterator[Callable[..., RunningGateway]]:
    """Start the gateway with only Matrix, as ``bot``, letting ``allowed`` in."""
    monkeypatch.chdir(tmp_path)
    started: list[RunningGateway] = []

    def start(bot: MatrixUser, allowed: MatrixUser, extra: str = "") -> RunningGateway:
        hermes.config(
            f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
            "gateway:\n  restart_backoff_seconds: 0.2\n  restart_backoff_max_seconds: 1\n"
            "  drain_seconds: 5\n  stream: false\n"
            "platforms:\n  telegram:\n    enabled: false\n"
            f"  matrix:\n    homeserver: {synapse.url}\n    allowed_users: ['{allowed.user_id}']\n"
            f"{extra}"
        )
        hermes.dotenv(f"MATRIX_ACCESS_TOKEN={bot.token}\n")
        gateway = RunningGateway(hermes.home).start()
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        if gateway.thread.is_alive():
            gateway.stop()


def bot_says(person: MatrixUser, room: str, bot: MatrixUser, text: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def seen() -> bool:
        found[:] = [c for c in person.seen(room, bot.user_id) if text in str(c.get("body"))]
        return bool(found)

    wait_until(seen, timeout=30)
    return found[-1]


def user_texts(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.json["messages"] if m["role"] == "user"]


def test_an_allowed_dm_is_answered_and_a_stranger_gets_nothing(
    matrix_gateway, synapse, openai_server
):
    bot, owner, stranger = synapse.register(), synapse.register(), synapse.register()
    openai_server.queue(Reply.say("Hello from **Hermes**."))
    matrix_gateway(bot, owner)
    dm = owner.create_room([bot.user_id])
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)  # invite accepted
    owner.say(dm, "hi there")
    reply = bot_says(owner, dm, bot, "Hello from **Hermes**.")
    assert "<strong>Hermes</strong>" in reply["formatted_body"]  # Markdown, with plain text
    (request,) = openai_server.requests
    assert user_texts(request) == ["hi there"]

    ignored = stranger.create_room([bot.user_id])  # a stranger's invitation is ignored
    group = owner.create_room([bot.user_id, stranger.user_id], direct=False)
    stranger.join(group)
    wait_until(lambda: bot.user_id in owner.joined_members(group), timeout=30)
    stranger.say(group, f"{bot.user_id} do something for me", mentions=[bot.user_id])
    owner.say(group, "chatter that names nobody")
    time.sleep(3)
    assert len(openai_server.requests) == 1, (
        "neither the stranger nor the chatter reached the model"
    )
    assert bot.user_id not in stranger.joined_members(ignored)


def test_a_restart_neither_replays_nor_loses_a_message(matrix_gateway, synapse, openai_server):
    bot, owner = synapse.register(), synapse.register()
    openai_server.queue(Reply.say("First answer."), Reply.say("Second answer."))
    gateway = matrix_gateway(bot, owner)
    dm = owner.create_room([bot.user_id])
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)
    owner.say(dm, "first question")
    bot_says(owner, dm, bot, "First answer.")
    gateway.stop()
    owner.say(dm, "second question, written while Hermes was down")
    matrix_gateway(bot, owner)
    bot_says(owner, dm, bot, "Second answer.")
    time.sleep(2)
    assert len(openai_server.requests) == 2
    assert user_texts(openai_server.requests[1]) == [
        "first question",
        "second question, written while Hermes was down",
    ]
    replies = [c["body"] for c in owner.seen(dm, bot.user_id)]
    assert replies == ["First answer.", "Second answer."]


def test_a_thread_is_a_session_of_its_own(matrix_gateway, synapse, openai_server):
    bot, owner = synapse.register(), synapse.register()
    openai_server.queue(Reply.say("In the room."), Reply.say("In the thread."), Reply.say("Still."))
    gateway = matrix_gateway(bot, owner)
    dm = owner.create_room([bot.user_id])
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)
    root = owner.say(dm, "a message in the room")
    bot_says(owner, dm, bot, "In the room.")
    owner.say(dm, "a reply in the thread", thread=root)
    reply = bot_says(owner, dm, bot, "In the thread.")
    assert reply["m.relates_to"]["rel_type"] == "m.thread"
    assert reply["m.relates_to"]["event_id"] == root
    owner.say(dm, "more in the thread", thread=root)
    bot_says(owner, dm, bot, "Still.")
    assert user_texts(openai_server.requests[1]) == ["a reply in the thread"]  # a new session
    assert user_texts(openai_server.requests[2]) == ["a reply in the thread", "more in the thread"]
    assert len(gateway.sessions("matrix")) == 2


def test_with_encryption_off_an_encrypted_message_gets_one_line(
    matrix_gateway, synapse, openai_server
):
    bot, owner = synapse.register(), synapse.register()
    matrix_gateway(bot, owner, "    encryption: false\n")
    room = owner.create_room([bot.user_id], encrypted=True)
    wait_until(lambda: bot.user_id in owner.joined_members(room), timeout=30)
    owner.send(
        room,
        {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "session_id": "x"},
        kind="m.room.encrypted",
    )
    notice = bot_says(owner, room, bot, "end-to-end encrypted")
    assert notice["msgtype"] == "m.notice"
    assert not openai_server.requests


def sent_by(person: MatrixUser, room: str, sender: str) -> set[str]:
    """The types of the events ``sender`` put in the room, as the homeserver stores them."""
    return {
        e["type"] for e in person.raw_events(room) if e["sender"] == sender and "state_key" not in e
    }


def device_sees(device: EncryptingDevice, room: str, bot: MatrixUser, text: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def seen() -> bool:
        found[:] = [c for c in device.seen(room, bot.user_id) if text in str(c.get("body"))]
        return bool(found)

    wait_until(seen, timeout=30)
    return found[-1]


@pytest.fixture
def phone(synapse: Synapse) -> Iterator[Callable[..., EncryptingDevice]]:
    """A person's device that encrypts, as Element on a phone (closed afterwards)."""
    opened: list[EncryptingDevice] = []

    def open_device(person: MatrixUser, cross_signed: bool = True) -> EncryptingDevice:
        opened.append(person.new_device(cross_signed=cross_signed))
        return opened[-1]

    yield open_device
    for device in opened:
        device.close()


def test_an_encrypted_dm_and_group_mention_are_answered_encrypted(
    matrix_gateway, synapse, openai_server, phone
):
    bot, owner, friend = synapse.register(), synapse.register(), synapse.register()
    owners_phone = phone(owner)
    openai_server.queue(Reply.say("The secret is **safe**."), Reply.say("Said in the group."))
    matrix_gateway(bot, owner)
    wait_until(lambda: owner.published_keys(bot.user_id), timeout=30)  # the bot's device

    dm = owner.create_room([bot.user_id], encrypted=True)
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)
    owners_phone.say(dm, "what is the secret?")
    reply = device_sees(owners_phone, dm, bot, "The secret is **safe**.")
    assert "<strong>safe</strong>" in reply["formatted_body"]
    assert user_texts(openai_server.requests[0]) == ["what is the secret?"]

    group = owner.create_room([bot.user_id, friend.user_id], direct=False, encrypted=True)
    friend.join(group)
    wait_until(lambda: bot.user_id in owner.joined_members(group), timeout=30)
    owners_phone.say(group, "chatter that names nobody")
    owners_phone.say(group, f"{bot.localpart}: and here?", mentions=[bot.user_id])
    device_sees(owners_phone, group, bot, "Said in the group.")
    assert len(openai_server.requests) == 2, "the unaddressed chatter did not reach the model"
    assert "and here?" in user_texts(openai_server.requests[1])[-1]

    # The homeserver holds only ciphertext from the bot, in both rooms.
    assert sent_by(owner, dm, bot.user_id) == {"m.room.encrypted"}
    assert sent_by(owner, group, bot.user_id) == {"m.room.encrypted"}


def test_a_session_its_owner_has_not_verified_is_not_acted_on(
    matrix_gateway, synapse, openai_server, phone
):
    """As the Matrix page says: with ``trust: cross-signed`` (the default), a message from a
    device its owner has not cross-signed gets one line, which only the owner's verified
    devices can read, and reaches neither the model nor the device that sent it."""
    bot, owner = synapse.register(), synapse.register()
    owners_phone = phone(owner)  # cross-signed: the owner's own
    stolen = phone(owner, cross_signed=False)  # a login nobody verified
    openai_server.queue(Reply.say("Only for the verified."))
    matrix_gateway(bot, owner)
    wait_until(lambda: owner.published_keys(bot.user_id), timeout=30)
    dm = owner.create_room([bot.user_id], encrypted=True)
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)

    stolen.say(dm, "send me the owner's files")
    notice = device_sees(owners_phone, dm, bot, "have not verified")
    assert stolen.device_id in notice["body"]
    assert notice["msgtype"] == "m.notice"
    wait_until(lambda: stolen.unreadable, timeout=30)  # no key for the unverified device
    assert not stolen.seen(dm, bot.user_id)
    assert not openai_server.requests

    owner.say(dm, "plaintext into the encrypted room")  # proves no device at all
    unencrypted = device_sees(owners_phone, dm, bot, "sent unencrypted")
    assert unencrypted["msgtype"] == "m.notice"
    assert not openai_server.requests

    owners_phone.say(dm, "and from my phone?")
    device_sees(owners_phone, dm, bot, "Only for the verified.")
    assert user_texts(openai_server.requests[0]) == ["and from my phone?"]
    assert sent_by(owner, dm, bot.user_id) == {"m.room.encrypted"}


def test_an_encrypted_room_survives_a_restart_and_a_malformed_event(
    matrix_gateway, synapse, openai_server, phone
):
    bot, owner = synapse.register(), synapse.register()
    owners_phone = phone(owner)
    openai_server.queue(Reply.say("Before the restart."), Reply.say("After the restart."))
    gateway = matrix_gateway(bot, owner)
    wait_until(lambda: owner.published_keys(bot.user_id), timeout=30)
    (device,) = owner.published_keys(bot.user_id)
    dm = owner.create_room([bot.user_id], encrypted=True)
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)
    owners_phone.say(dm, "first")
    device_sees(owners_phone, dm, bot, "Before the restart.")
    gateway.stop()

    # Any member can send an envelope that is not one; it must not stop the sync.
    owner.send(dm, {"algorithm": "m.megolm.v1.aes-sha2"}, kind="m.room.encrypted")
    owners_phone.say(dm, "second, written while Hermes was down")
    matrix_gateway(bot, owner)
    device_sees(owners_phone, dm, bot, "After the restart.")
    assert owner.published_keys(bot.user_id) == {device}, "the same device, its keys kept"
    assert user_texts(openai_server.requests[1])[-1] == "second, written while Hermes was down"


def test_with_trust_any_every_device_is_answered(matrix_gateway, synapse, openai_server, phone):
    bot, owner = synapse.register(), synapse.register()
    laptop = phone(owner, cross_signed=False)  # no cross-signing on the account at all
    openai_server.queue(Reply.say("Answered anyway."))
    matrix_gateway(bot, owner, "    trust: any\n")
    wait_until(lambda: owner.published_keys(bot.user_id), timeout=30)
    dm = owner.create_room([bot.user_id], encrypted=True)
    wait_until(lambda: bot.user_id in owner.joined_members(dm), timeout=30)
    laptop.say(dm, "hello from an unverified laptop")
    device_sees(laptop, dm, bot, "Answered anyway.")
