"""The IRC adapter against a real ngircd: channels, mentions, CTCP, nick collisions, TLS,
reconnecting, long replies under the line limit; SASL and STARTTLS against a scripted
server (ngircd has neither); settings and line cutting alone."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_irc import connection as connection_module
from hermes_plugin_platform_irc.adapter import IrcAdapter, replayed_long_ago
from hermes_plugin_platform_irc.connection import Pacer
from hermes_plugin_platform_irc.settings import FloodRules, IrcSettings
from hermes_plugin_platform_irc.splitting import to_lines
from hermes_plugin_platform_irc.testing import IrcServer, fresh, irc_server, znc_bouncer
from hermes_plugin_platform_irc.wire import casefold, format_line, parse_line

from hermes_sdk.platform import ChatRef, Choice, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually


def context(tmp_path: Path, **config: Any) -> PlatformContext:
    return PlatformContext(name="irc", home=str(tmp_path), config=config)


def running(adapter: IrcAdapter) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    return adapter_running(adapter, RecordingHost(), lambda: adapter.connected)


def on(
    server: IrcServer, tmp_path: Path, secrets: dict[str, str] | None = None, **config: Any
) -> IrcAdapter:
    settings = {"server": "127.0.0.1", "port": server.port, "tls": "none", "nick": fresh("bot")}
    given = PlatformContext(
        name="irc", home=str(tmp_path), config=settings | config, secrets=secrets or {}
    )
    return IrcAdapter(given)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


# --- channels ------------------------------------------------------------------------------


def test_a_mention_in_a_channel_is_answered_there_with_the_askers_nick(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    channel = fresh("#room")
    adapter = on(irc_server, tmp_path, channels=[channel])
    nick = adapter.settings.nick

    alice = irc_server.user(channels=(channel,))

    async def scenario() -> None:
        async with running(adapter) as host:
            await eventually(
                lambda: any(line.command == "JOIN" and line.nick == nick for line in alice.lines)
            )
            alice.say(channel, "just chatting")
            alice.say(channel, f"{nick}: what is the time?")
            alice.say(channel, f"hey {nick.upper()}, and the date?")
            await eventually(lambda: len(host.messages) >= 2)
            await asyncio.sleep(0.3)
            first, second = host.messages
            assert (first.text, second.text) == (
                "what is the time?",
                f"hey {nick.upper()}, and the date?",
            )
            assert first.chat == ChatRef("irc", casefold(channel), "group")
            assert first.user_id == casefold(alice.nick) and first.addressed
            await adapter.send(first.chat, "noon", reply_to=first.message_id)
            said = await eventually(lambda: alice.heard_from(nick, channel))
            assert said[0].text == f"{alice.nick}: noon"

    run(scenario)


def test_ctcp_notices_and_its_own_lines_are_never_handed_over(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    adapter = on(irc_server, tmp_path)
    nick = adapter.settings.nick

    async def scenario() -> None:
        async with running(adapter) as host:
            bob = irc_server.user()
            bob.ctcp(nick, "VERSION")
            bob.ctcp(nick, "ACTION waves")
            bob.notice(nick, "a notice")
            bob.say(nick, "\x02bold\x02 \x0304red\x03 words")
            await eventually(lambda: host.messages)
            await asyncio.sleep(0.3)
            assert [m.text for m in host.messages] == ["bold red words"]
            assert host.messages[0].chat.chat_type == "private"
            assert not bob.heard_from(nick)  # no CTCP reply either

    run(scenario)


def test_allowed_nicks_are_matched_by_the_servers_case_rules_and_kept_as_written(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    written = fresh("Carol[Away]")
    adapter = on(irc_server, tmp_path, allowed_users=[written])
    same = irc_server.user(nick=written.upper())
    # ngircd says CASEMAPPING=ascii: {} is not the lower case of [] there, so this is
    # someone else, however rfc1459 servers would see it.
    other = irc_server.user(nick=written.lower().replace("[", "{").replace("]", "}"))

    async def scenario() -> None:
        async with running(adapter) as host:
            same.say(adapter.settings.nick, "hello")
            other.say(adapter.settings.nick, "me too?")
            await eventually(lambda: len(host.messages) == 2)
            by_text = {m.text: m.user_id for m in host.messages}
            assert by_text["hello"] == written
            assert by_text["me too?"] == other.nick.lower() != written

    run(scenario)


def test_a_taken_nick_gets_another_and_mentions_of_either_count(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    channel = fresh("#room")
    wanted = fresh("hermes")
    holder = irc_server.user(nick=wanted, channels=(channel,))
    adapter = on(irc_server, tmp_path, nick=wanted, channels=[channel])

    async def scenario() -> None:
        async with running(adapter) as host:
            connection = adapter._connection
            assert connection is not None and connection.nick == f"{wanted}_"
            await eventually(
                lambda: any(
                    h for h in holder.lines if h.command == "JOIN" and h.nick == f"{wanted}_"
                )
            )
            holder.say(channel, f"{wanted}_: are you there?")
            await eventually(lambda: host.messages)
            assert host.messages[0].text == "are you there?"

    run(scenario)


# --- long replies and flood rules ----------------------------------------------------------


def test_a_3000_character_reply_arrives_whole_in_order_in_lines_under_512_bytes(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    adapter = on(irc_server, tmp_path, flood={"burst": 4, "seconds_per_line": 0.5})
    nick = adapter.settings.nick
    words = ["naïve", "café", "中文字符", "😀", "👍🏽", "🇫🇷", "e\u0301", "plain", "text"]
    reply = " ".join(words[n % len(words)] + str(n) for n in range(600))[:3000]

    async def scenario() -> None:
        async with running(adapter):
            dave = irc_server.user()
            chat = ChatRef("irc", casefold(dave.nick), "private")
            ids = await adapter.send(chat, reply)
            heard = await eventually(
                lambda: (got := dave.heard_from(nick)) and len(got) == len(ids) and got, timeout=60
            )
            for line in heard:
                relayed = f":{line.source} PRIVMSG {line.target} :{line.text}\r\n"
                assert len(relayed.encode()) <= 512
                assert "\ufffd" not in line.text  # no character cut in two
            assert " ".join(line.text for line in heard) == reply
            assert not dave.closed.is_set() and adapter.connected
            assert "flood" not in irc_server.log().lower()

    run(scenario)


def test_cuts_keep_graphemes_and_words_whole() -> None:
    family, flag, accented = "👨‍👩‍👧‍👦", "🇫🇷", "e\u0301"
    text = "word " * 30 + family * 20 + flag * 40 + accented * 60 + " " + "👍🏽" * 30
    lines = to_lines(text, 100)
    assert all(len(line.encode()) <= 100 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    glued = ("\u200d", "\u0301", "\U0001f3fd")
    assert not any(line.startswith(glued) or line.endswith("\u200d") for line in lines)
    for line in lines:  # each flag (two regional letters) whole
        letters = [c for c in line if "\U0001f1e6" <= c <= "\U0001f1ff"]
        assert len(letters) % 2 == 0 and "".join(letters) == flag * (len(letters) // 2)
    assert to_lines("```python\nprint(1)\n```\n\n\tindented", 100) == ["print(1)", "    indented"]
    assert to_lines("a\x01ACTION\x01 b\rc", 100) == ["aACTION bc"]


def test_the_pacer_lets_a_burst_go_then_one_line_per_interval() -> None:
    now = [0.0]
    pacer = Pacer(FloodRules(burst=3, seconds_per_line=2.0), clock=lambda: now[0])
    assert [pacer.delay() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert pacer.delay() == pytest.approx(2.0)
    now[0] += 2.0
    assert pacer.delay() == 0.0
    now[0] += 100
    assert [pacer.delay() for _ in range(3)] == [0.0, 0.0, 0.0]  # never more than the burst
    assert pacer.delay() > 0


# --- TLS, reconnecting ---------------------------------------------------------------------


def test_tls_with_the_servers_ca_and_a_clear_error_without_it(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    trusted = on(
        irc_server, tmp_path, tls="tls", port=irc_server.tls_port, ca_file=irc_server.ca_file
    )
    untrusted = on(irc_server, tmp_path, tls="tls", port=irc_server.tls_port)

    async def scenario() -> None:
        async with running(trusted) as host:
            erin = irc_server.user()
            erin.say(trusted.settings.nick, "over tls")
            await eventually(lambda: host.messages)
        with pytest.raises(PlatformNotConfigured, match=r"not trusted.*ca_file") as raised:
            async with running(untrusted):
                pass
        assert "\n" not in str(raised.value)

    run(scenario)


def test_it_reconnects_after_the_server_restarts(tmp_path: Path) -> None:
    stack = contextlib.ExitStack()
    first = stack.enter_context(irc_server())
    adapter = on(first, tmp_path)
    nick = adapter.settings.nick

    async def scenario() -> None:
        async with running(adapter) as host:
            await asyncio.to_thread(stack.close)  # ngircd stops
            await eventually(lambda: not adapter.connected)
            with irc_server(first.port) as second:
                await eventually(lambda: adapter.connected, timeout=30)
                frank = second.user()
                frank.say(nick, "back again")
                await eventually(lambda: host.messages)
                assert await adapter.send(host.messages[0].chat, "welcome back")
                await eventually(lambda: frank.heard_from(nick))

    try:
        run(scenario)
    finally:
        stack.close()


# --- SASL and STARTTLS, against a scripted server -------------------------------------------


class ScriptedServer:
    """Enough of an IRCv3 server to register a client: CAP LS/REQ/END, SASL PLAIN (one
    account), STARTTLS; then 001 and the end of the MOTD."""

    def __init__(
        self,
        caps: str = "sasl server-time",
        password: str = "s3cret",
        tls: ssl.SSLContext | None = None,
        knows_cap: bool = True,
    ) -> None:
        self.caps, self.password, self.tls = caps, password, tls
        self.knows_cap = knows_cap
        self.after_welcome: list[str] = []
        self.accepted_logins = 10**6
        self.logins = 0
        self.drop_after_welcome = False
        """Lines sent once the client is registered (as the server would, later)."""
        self.received: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def send(text: str) -> None:
            writer.write(f":scripted {text}\r\n".encode())

        nick = "*"
        with contextlib.suppress(Exception):
            while raw := await reader.readline():
                line = parse_line(raw.decode())
                if line is None:
                    continue
                self.received.append(raw.decode().strip())
                if line.command == "STARTTLS" and self.tls is not None:
                    send("670 * :STARTTLS successful, go ahead")
                    await writer.drain()
                    await writer.start_tls(self.tls)
                elif line.command == "CAP" and not self.knows_cap:
                    send(f"421 {nick} CAP :Unknown command")
                elif line.command == "USER" and not self.knows_cap:
                    send(f"001 {nick} :Welcome")
                    send(f"376 {nick} :End of MOTD")
                elif line.command == "CAP" and line.param(0) == "LS":
                    *first, last = self.caps.split(" | ")  # a long list comes in lines
                    for part in first:
                        send(f"CAP * LS * :{part}")
                    send(f"CAP * LS :{last}")
                elif line.command == "CAP" and line.param(0) == "REQ":
                    send(f"CAP * ACK :{line.param(1)}")
                elif line.command == "NICK":
                    nick = line.param(0)
                elif line.command == "AUTHENTICATE" and line.param(0) == "PLAIN":
                    send("AUTHENTICATE +")
                elif line.command == "AUTHENTICATE":
                    _, user, password = base64.b64decode(line.param(0)).decode().split("\0")
                    self.logins += 1
                    if password == self.password and self.logins <= self.accepted_logins:
                        send(f"900 {nick} {nick}!u@h {user} :You are now logged in as {user}")
                        send(f"903 {nick} :SASL authentication successful")
                    else:
                        send(f"904 {nick} :SASL authentication failed")
                elif line.command == "CAP" and line.param(0) == "END":
                    send(f"001 {nick} :Welcome")
                    send(f"376 {nick} :End of MOTD")
                    for extra in self.after_welcome:
                        writer.write(f"{extra}\r\n".encode())
                    if self.drop_after_welcome:
                        await writer.drain()
                        writer.close()
                        return
                await writer.drain()


def sasl_context(
    tmp_path: Path, port: int, password: str = "s3cret", **config: Any
) -> PlatformContext:
    settings = {"server": "127.0.0.1", "port": port, "tls": "none", "nick": "hermes", "sasl": True}
    return PlatformContext(
        name="irc",
        home=str(tmp_path),
        config=settings | config,
        secrets={"IRC_SASL_PASSWORD": password},
    )


def test_sasl_plain_logs_in_before_registration_ends(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with ScriptedServer() as server:
            adapter = IrcAdapter(sasl_context(tmp_path, server.port))
            async with running(adapter):
                pass
            sent = server.received
            assert sent[0] == "CAP LS 302"
            assert "CAP REQ :server-time sasl" in sent
            login = next(
                line
                for line in sent
                if line.startswith("AUTHENTICATE ") and line != "AUTHENTICATE PLAIN"
            )
            assert base64.b64decode(login.split()[1]) == b"hermes\0hermes\0s3cret"
            assert sent.index(login) < sent.index("CAP END")

    run(scenario)


@pytest.mark.parametrize(
    ("caps", "password", "error"),
    [
        ("sasl", "wrong", "refused the SASL login as hermes"),
        ("server-time", "s3cret", "offers no SASL"),
    ],
)
def test_a_refused_or_missing_sasl_is_one_line_and_no_retry(
    tmp_path: Path, caps: str, password: str, error: str
) -> None:
    async def scenario() -> None:
        async with ScriptedServer(caps=caps) as server:
            adapter = IrcAdapter(sasl_context(tmp_path, server.port, password=password))
            with pytest.raises(PlatformNotConfigured, match=error) as raised:
                async with running(adapter):
                    pass
            assert "\n" not in str(raised.value)

    run(scenario)


def test_starttls_upgrades_before_anything_else_is_said(
    tmp_path: Path, irc_server: IrcServer
) -> None:
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate = Path(irc_server.ca_file)
    tls.load_cert_chain(certificate, certificate.with_name("server.key"))

    async def scenario() -> None:
        async with ScriptedServer(tls=tls) as server:
            config = {"tls": "starttls", "ca_file": irc_server.ca_file, "sasl": True}
            adapter = IrcAdapter(sasl_context(tmp_path, server.port, **config))
            async with running(adapter):
                pass
            assert server.received[0] == "STARTTLS"
            assert "CAP END" in server.received

    run(scenario)


# --- settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "secrets", "error"),
    [
        ({}, {}, "set platforms.irc.server"),
        ({"server": "irc.example.org", "tls": "ssl"}, {}, "none, tls or starttls"),
        ({"server": "irc.example.org", "nick": "9lives"}, {}, "not an IRC nick"),
        ({"server": "irc.example.org", "channels": ["hermes"]}, {}, "quote it in YAML"),
        ({"server": "irc.example.org", "sasl": True}, {}, "IRC_SASL_PASSWORD"),
        (
            {"server": "irc.example.org", "sasl": {"password": "x"}},
            {},
            "belongs in HERMES_HOME/.env",
        ),
        (
            {"server": "irc.example.org", "tls": "none", "sasl": True},
            {"IRC_SASL_PASSWORD": "p"},
            "in the clear",
        ),
        ({"server": "irc.example.org", "port": "abc"}, {}, "a port number"),
        ({"server": "irc.example.org", "flood": {"burst": 0}}, {}, "flood.burst"),
        ({"server": "irc.example.org", "identity": "email"}, {}, "nick or account"),
        ({"server": "irc.example.org", "password": "pw"}, {}, "IRC_SERVER_PASSWORD"),
        ({"server": "irc.example.org", "ca_file": "/nowhere.pem"}, {}, "is not a file"),
    ],
)
def test_a_wrong_setting_is_one_line_saying_what_to_fix(
    tmp_path: Path, config: dict[str, Any], secrets: dict[str, str], error: str
) -> None:
    with pytest.raises(PlatformNotConfigured, match=error) as raised:
        IrcSettings.from_context(
            PlatformContext(name="irc", home=str(tmp_path), config=config, secrets=secrets)
        )
    assert "\n" not in str(raised.value)


def test_hermes_agents_variables_configure_it(tmp_path: Path) -> None:
    secrets = {
        "IRC_SERVER": "irc.libera.chat",
        "IRC_CHANNEL": "#hermes,#ops",
        "IRC_NICKNAME": "hermes-bot",
        "IRC_USE_TLS": "false",
        "IRC_SERVER_PASSWORD": "pw",
    }
    settings = IrcSettings.from_context(
        PlatformContext(name="irc", home=str(tmp_path), secrets=secrets)
    )
    assert (settings.server, settings.port, settings.tls) == ("irc.libera.chat", 6667, "none")
    assert settings.channels == ("#hermes", "#ops") and settings.server_password == "pw"
    assert "pw" not in repr(settings)


def test_lines_parse_and_format_as_the_rfc_and_ircv3_write_them() -> None:
    line = parse_line("@time=2026-12-07T10:00:00.000Z;msgid=a\\sb :nick!u@h PRIVMSG #c :hi there")
    assert line is not None
    assert (line.command, line.params, line.nick) == ("PRIVMSG", ("#c", "hi there"), "nick")
    assert line.tags == {"time": "2026-12-07T10:00:00.000Z", "msgid": "a b"}
    assert format_line("PRIVMSG", "#c", "hi there") == b"PRIVMSG #c :hi there\r\n"
    with pytest.raises(ValueError, match="line break"):
        format_line("PRIVMSG", "#c", "hi\r\nQUIT")
    assert casefold("Nick[A]^\\") == "nick{a}~|"


def test_an_approval_is_a_word_typed_back(irc_server: IrcServer, tmp_path: Path) -> None:
    adapter = on(irc_server, tmp_path)

    async def scenario() -> None:
        async with running(adapter) as host:
            gina = irc_server.user()
            chat = ChatRef("irc", casefold(gina.nick), "private")
            choices = [Choice("approve", "Approve"), Choice("deny", "Deny")]
            await adapter.ask(chat, "Run `rm -r build`?", choices, "q1")
            await eventually(lambda: gina.heard_from(adapter.settings.nick))
            gina.say(adapter.settings.nick, "deny")
            press = await eventually(lambda: host.presses and host.presses[0])
            assert (press.request_id, press.choice) == ("q1", "deny")
            assert not host.messages

    run(scenario)


def test_a_bouncers_replay_keeps_each_lines_id_and_old_replays_are_not_heard(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    nick = fresh("zbot")
    owner = irc_server.user()
    with znc_bouncer(irc_server, nick) as bouncer:
        owner.online(nick)
        owner.say(nick, "said while no client was attached")
        owner.round_trip()  # the server has passed it on to ZNC
        seen: list[list[str]] = []
        for _attach in range(2):  # ZNC plays the same buffer back on every attach
            secrets = {"IRC_SERVER_PASSWORD": bouncer.password}
            adapter = on(irc_server, tmp_path, secrets, nick=nick, port=bouncer.port)

            async def scenario(adapter: IrcAdapter = adapter) -> None:
                async with running(adapter) as host:
                    await eventually(lambda: host.messages)
                    seen.append([m.message_id for m in host.messages])

            run(scenario)
        assert seen[0] == seen[1] and len(seen[0]) == 1
    old = parse_line("@time=2026-12-01T10:00:00.000Z :ann!a@h PRIVMSG bot :stale")
    new = parse_line(f"@time={datetime.now(UTC).isoformat()} :ann!a@h PRIVMSG bot :new")
    assert old is not None and new is not None
    assert replayed_long_ago(old) and not replayed_long_ago(new)


def test_multi_line_capability_lists_are_read_whole(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with ScriptedServer(caps="sasl | server-time account-tag") as server:
            adapter = IrcAdapter(sasl_context(tmp_path, server.port))
            async with running(adapter):
                pass
            assert "CAP REQ :server-time account-tag sasl" in server.received

    run(scenario)


def test_sasl_on_a_server_without_cap_is_a_setting_to_fix_not_a_quiet_downgrade(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with ScriptedServer(knows_cap=False) as server:
            adapter = IrcAdapter(sasl_context(tmp_path, server.port))
            with pytest.raises(PlatformNotConfigured, match="without a SASL login"):
                async with running(adapter):
                    pass

    run(scenario)


def test_account_identity_where_the_server_vouches_for_no_one_is_refused(
    irc_server: IrcServer, tmp_path: Path
) -> None:
    adapter = on(irc_server, tmp_path, identity="account")  # ngircd has no account-tag

    async def scenario() -> None:
        with pytest.raises(PlatformNotConfigured, match="account-tag"):
            async with running(adapter):
                pass

    run(scenario)


def test_starttls_where_the_server_has_none_is_one_line(
    irc_server: IrcServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "STARTTLS_SECONDS", 1.0)
    adapter = on(irc_server, tmp_path, tls="starttls")  # ngircd does not answer STARTTLS

    async def scenario() -> None:
        with pytest.raises(PlatformNotConfigured, match="does not upgrade to TLS") as raised:
            async with running(adapter):
                pass
        assert "\n" not in str(raised.value)

    run(scenario)


def test_a_long_taken_nick_falls_back_within_nicklen_and_lines_fit_after_getting_it_back(
    irc_server: IrcServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "REGAIN_SECONDS", 0.5)
    channel = fresh("#room")
    # As long as ngircd takes here (NICKLEN 30): the fallback must not grow, and the
    # source in front of each line grows when the bot gets it back.
    wanted = (fresh("h") + "x" * 40)[:30]
    holder = irc_server.user(nick=wanted, channels=(channel,))
    watcher = irc_server.user(channels=(channel,))
    adapter = on(irc_server, tmp_path, nick=wanted, channels=[channel])
    reply = " ".join(f"word{n}" for n in range(400))

    async def scenario() -> None:
        async with running(adapter):
            connection = adapter._connection
            assert connection is not None and connection.nick == wanted[:-1] + "_"
            await eventually(
                lambda: any(
                    seen.command == "JOIN" and seen.nick == connection.nick
                    for seen in watcher.lines
                )
            )
            holder.quit()
            await asyncio.sleep(1.0)
            watcher.say(channel, "anyone?")  # a line: the bot tries for its nick again
            await eventually(lambda: connection.nick == wanted)
            chat = ChatRef("irc", casefold(channel), "group")
            await adapter.send(chat, reply)
            heard = await eventually(
                lambda: (
                    (got := watcher.heard_from(wanted, channel))
                    and " ".join(h.text for h in got).endswith(reply[-12:])
                    and got
                ),
                timeout=40,
            )
            assert " ".join(h.text for h in heard) == reply  # the server cut nothing

    run(scenario)


def test_after_a_nick_change_lines_are_cut_for_the_new_longer_source(tmp_path: Path) -> None:
    longer = "hermes-with-a-much-longer-nick"
    source = f"{longer}!~hermes@a-rather-long-cloaked-host.example.org"

    async def scenario() -> None:
        async with ScriptedServer(caps="server-time") as server:
            server.after_welcome = [
                ":hermes!~hermes@a-rather-long-cloaked-host.example.org JOIN #c",
                f":hermes!~hermes@a-rather-long-cloaked-host.example.org NICK :{longer}",
            ]
            context = sasl_context(tmp_path, server.port, sasl=False)
            adapter = IrcAdapter(context)
            async with running(adapter):
                connection = adapter._connection
                assert connection is not None
                await eventually(lambda: connection.nick == longer)
                await adapter.send(ChatRef("irc", "#c", "group"), "word " * 300)
                sent = await eventually(
                    lambda: (
                        (got := [r for r in server.received if r.startswith("PRIVMSG #c")])
                        and len(got) >= 3
                        and got
                    )
                )
            for raw in sent:
                relayed = f":{source} {raw}\r\n"
                assert len(relayed.encode()) <= 512

    run(scenario)


def test_a_login_refused_after_it_worked_is_tried_again_not_the_end(tmp_path: Path) -> None:
    """Services restarting refuse SASL for a while: the platform keeps trying."""

    async def scenario() -> None:
        async with ScriptedServer() as server:
            server.accepted_logins = 1  # then every login is refused
            server.drop_after_welcome = True  # and the first connection drops
            adapter = IrcAdapter(sasl_context(tmp_path, server.port))
            task = asyncio.ensure_future(adapter.run(RecordingHost()))
            try:
                await eventually(lambda: server.logins >= 2, timeout=15)
                await asyncio.sleep(0.5)
                assert not task.done()  # refused, after it worked: retried with backoff
            finally:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                await adapter.aclose()

    run(scenario)
