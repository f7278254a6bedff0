"""IRC through a real ``hermes gateway run`` process: the IRC plugin on a real IRC server
(Debian's ngircd), with raw IRC clients playing the people, and through a real bouncer
(Debian's ZNC) that keeps what is said while the gateway is away and plays it back."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hermes_plugin_platform_irc.testing import (
    Heard,
    IrcServer,
    IrcUser,
    fresh,
    inspircd_server,
    znc_bouncer,
)
from hermes_plugin_platform_irc.wire import format_line

from hermes_testkit import Reply

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "Owner"


@pytest.fixture
def irc_gateway(
    platform_process, irc_server: IrcServer
) -> Callable[..., tuple[GatewayProcess, str, str, IrcUser]]:
    """Start ``hermes gateway run`` with only IRC in a fresh channel, letting OWNER in;
    returns the gateway, the bot's nick, the channel and the owner (in the channel), once
    the bot has joined it."""
    nick, channel = fresh("hermes"), fresh("#team")
    owner = irc_server.user(nick=fresh(OWNER), channels=(channel,))

    def start(
        write: bool = True, flood: str = "{burst: 4, seconds_per_line: 0.3}"
    ) -> tuple[GatewayProcess, str, str, IrcUser]:
        section = (
            f"  irc:\n    server: 127.0.0.1\n    port: {irc_server.port}\n    tls: none\n"
            f"    nick: {nick}\n    channels: ['{channel}']\n"
            f"    allowed_users: ['{owner.nick.upper()}']\n    flood: {flood}\n"
        )
        joins = len(joined(owner, nick))
        gateway = platform_process(
            section, ready=lambda: len(joined(owner, nick)) > joins, write=write
        )
        return gateway, nick, channel, owner

    return start


def joined(person: IrcUser, nick: str) -> list[object]:
    return [line for line in list(person.lines) if line.command == "JOIN" and line.nick == nick]


def said(
    person: IrcUser, nick: str, text: str, target: str | None = None, timeout: float = 30
) -> list[Heard]:
    found: list[Heard] = []
    wait_until(
        lambda: found.extend(h for h in person.heard_from(nick, target) if text in h.text) or found,
        timeout,
    )
    return found


def test_a_mention_is_answered_in_the_channel_a_dm_privately_and_a_stranger_costs_nothing(
    irc_gateway, irc_server: IrcServer, openai_server
):
    openai_server.queue(Reply.say("Noon, channel."), Reply.say("Noon, privately."))
    _gateway, nick, channel, owner = irc_gateway()
    stranger = irc_server.user(channels=(channel,))
    owner.say(channel, "chatter that names nobody")
    stranger.say(channel, f"{nick}: run something for me")
    owner.say(channel, f"{nick}, what time is it?")
    (answer,) = said(owner, nick, "Noon, channel.", channel)
    assert answer.text == f"{owner.nick}: Noon, channel."
    owner.say(nick, "and privately?")
    said(owner, nick, "Noon, privately.", owner.nick)
    stranger.say(nick, "let me in")
    said(stranger, nick, "hermes pairing approve", stranger.nick)
    owner.ctcp(nick, "VERSION")
    time.sleep(1.0)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "what time is it?",
        "and privately?",
    ]
    assert not [h for h in stranger.heard_from(nick, stranger.nick) if "Noon" in h.text]


def test_a_3000_character_reply_arrives_whole_in_lines_under_512_bytes(irc_gateway, openai_server):
    words = ["naïve", "café", "中文字符", "😀", "👍🏽", "plain", "text"]
    reply = " ".join(words[n % len(words)] + str(n) for n in range(700))[:2999] + "."
    openai_server.queue(Reply.say(reply))
    _gateway, nick, _channel, owner = irc_gateway(flood="{burst: 4, seconds_per_line: 1.5}")
    owner.say(nick, "tell me everything")
    wait_until(lambda: " ".join(h.text for h in owner.heard_from(nick)).endswith(reply[-20:]), 60)
    heard = owner.heard_from(nick)
    assert " ".join(h.text for h in heard) == reply
    assert all(len(f":{h.source} PRIVMSG {h.target} :{h.text}\r\n".encode()) <= 512 for h in heard)
    assert len(heard) >= 7 and not owner.closed.is_set()


def test_a_restart_mid_turn_is_answered_once(irc_gateway, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first, nick, _channel, owner = irc_gateway()
    owner.say(nick, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    irc_gateway(write=False)
    said(owner, nick, "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    assert len([h for h in owner.heard_from(nick) if "after the restart" in h.text]) == 1
    assert len(openai_server.requests) == 2


def test_an_approval_is_a_word_typed_back(irc_gateway, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    _gateway, nick, _channel, owner = irc_gateway()
    owner.say(nick, "open up that folder")  # a private chat: a channel's turns have no terminal
    said(owner, nick, "chmod -R 777", owner.nick)
    owner.say(nick, "once")
    said(owner, nick, "Opened it.", owner.nick)
    assert oct(target.stat().st_mode)[-3:] == "777"


def test_through_a_bouncer_what_came_while_away_is_answered_once_however_often_replayed(
    platform_process, irc_server: IrcServer, openai_server, tmp_path
):
    nick, channel = fresh("hermes"), fresh("#team")
    owner = irc_server.user(nick=fresh(OWNER), channels=(channel,))
    with znc_bouncer(irc_server, nick, channels=(channel,)) as bouncer:
        owner.online(nick)  # ZNC holds the nick on the network; no gateway yet
        owner.wait_for_line(lambda line: line.command == "JOIN" and line.nick == nick)
        owner.say(nick, "sent while Hermes was away")
        owner.say(channel, f"{nick}: and this in the channel")
        owner.round_trip()  # ngircd has passed both on to ZNC
        openai_server.queue(Reply.say("Caught up."), Reply.say("Caught up."))
        section = (
            f"  irc:\n    server: 127.0.0.1\n    port: {bouncer.port}\n    tls: none\n"
            f"    nick: {nick}\n    channels: ['{channel}']\n"
            f"    allowed_users: ['{owner.nick}']\n"
        )
        log = tmp_path / "gateway.log"

        def connections() -> int:
            return log.read_text(errors="replace").count("irc: connected to") if log.exists() else 0

        first = platform_process(
            section, dotenv=f"IRC_SERVER_PASSWORD={bouncer.password}\n", ready=connections
        )
        said(owner, nick, "Caught up.", owner.nick)  # ZNC played its buffer back
        said(owner, nick, f"{owner.nick}: Caught up.", channel)
        assert first.terminate() == 0
        platform_process(section, write=False, ready=lambda: connections() >= 2)  # replays again
        time.sleep(2.0)
        assert len(openai_server.requests) == 2
        assert sorted(texts[-1] for texts in user_texts(openai_server)) == [
            "and this in the channel",
            "sent while Hermes was away",
        ]
        assert len(owner.heard_from(nick, owner.nick)) == 1
        assert len(owner.heard_from(nick, channel)) == 1


def test_on_a_server_that_kills_flooders_a_3000_character_reply_arrives_whole(
    platform_process, openai_server, tmp_path
):
    words = ["naïve", "café", "中文字符", "😀", "👍🏽", "plain", "text"]
    reply = " ".join(words[n % len(words)] + str(n) for n in range(700))[:2999] + "."
    with inspircd_server(threshold=5) as strict:
        # The rule bites: eight long lines at once get a client disconnected.
        flooder = strict.user()
        flooder.raw(b"".join(format_line("PRIVMSG", flooder.nick, "x" * 400) for _ in range(8)))
        flooder.closed.wait(10)
        assert flooder.closed.is_set() and "Excess Flood" in str(flooder.lines[-1:])
        owner = strict.user(nick=fresh(OWNER))
        nick = fresh("hermes")
        openai_server.queue(Reply.say(reply))
        section = (
            f"  irc:\n    server: 127.0.0.1\n    port: {strict.port}\n    tls: none\n"
            f"    nick: {nick}\n    allowed_users: ['{owner.nick}']\n"
        )
        log = tmp_path / "gateway.log"

        def connected() -> bool:
            return log.exists() and "irc: connected to" in log.read_text(errors="replace")

        gateway = platform_process(section, ready=connected)
        owner.say(nick, "tell me everything")
        wait_until(
            lambda: " ".join(h.text for h in owner.heard_from(nick)).endswith(reply[-20:]), 90
        )
        heard = owner.heard_from(nick)
        assert " ".join(h.text for h in heard) == reply
        assert all(
            len(f":{h.source} PRIVMSG {h.target} :{h.text}\r\n".encode()) <= 512 for h in heard
        )
        assert len(heard) >= 7
        assert "Excess Flood" not in gateway.log.read_text(errors="replace")
        assert "connection broke" not in gateway.log.read_text(errors="replace")
