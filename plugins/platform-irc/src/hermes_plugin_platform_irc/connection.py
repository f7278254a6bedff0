"""One connection to an IRC server: TLS or STARTTLS, registration (CAP, SASL PLAIN, a
free nick), NickServ, joining the channels, keeping alive, and sending at a pace the
server's flood rules allow.

A line from the server that is not the connection's own business (a PRIVMSG) goes to the
``heard`` callback. :meth:`IrcConnection.run` returns or raises when the connection ends;
the adapter connects again."""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
import time
from collections.abc import Callable, Sequence

from hermes_plugin_platform_irc.settings import FloodRules, IrcSettings
from hermes_plugin_platform_irc.splitting import room_for_text, to_lines
from hermes_plugin_platform_irc.wire import Line, casefold, format_line, parse_line
from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["IrcConnection", "NotConnected", "Pacer"]

log = logging.getLogger("hermes.irc")

CONNECT_SECONDS = 20.0
REGISTER_SECONDS = 60.0
STARTTLS_SECONDS = 10.0
MOTD_GRACE_SECONDS = 5.0
"""After the welcome (001), a server that sends no MOTD is taken as registered this late."""
IDENTIFY_SECONDS = 10.0
IDLE_SECONDS = 90.0
"""Quiet this long, the server is asked for a PONG; quiet twice as long, it is gone."""
REJOIN_SECONDS = 30.0
REGAIN_SECONDS = 120.0
WANTED_CAPS = ("server-time", "message-tags", "account-tag")
SASL_CHUNK = 400
NICK_TRIES = 8
_TAKEN = {"433", "436", "437"}


class NotConnected(Exception):
    """The connection is not (or no longer) up; ``sent`` lines of the reply went out."""

    def __init__(self, sent: int) -> None:
        super().__init__(f"not connected to the IRC server ({sent} lines sent)")
        self.sent = sent


class Pacer:
    """A line may go when a token is there: ``burst`` of them, one back every
    ``seconds_per_line``. The RFC 1459 message timer, as servers count penalties."""

    def __init__(self, rules: FloodRules, clock: Callable[[], float] = time.monotonic) -> None:
        self._rules = rules
        self._clock = clock
        self._tokens = float(rules.burst)
        self._stamp = clock()

    def delay(self) -> float:
        """Seconds until the next line may go (0: now), taking the token if it may."""
        pace = self._rules.seconds_per_line
        if pace <= 0:
            return 0.0
        now = self._clock()
        self._tokens = min(float(self._rules.burst), self._tokens + (now - self._stamp) / pace)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return 0.0
        return (1 - self._tokens) * pace

    async def wait(self) -> None:
        while (pause := self.delay()) > 0:
            await asyncio.sleep(pause)


class IrcConnection:
    def __init__(
        self,
        settings: IrcSettings,
        heard: Callable[[Line], None],
        refused: Callable[[str, str], None] = lambda target, why: None,
    ) -> None:
        self.settings = settings
        self._heard = heard
        self._refused = refused
        """Told of a target the server would not deliver to (401 no such nick, 404 cannot
        send to channel), and why."""
        self.logged_in = False
        self.registered = False
        """Registered once (unlike :attr:`ready`, never cleared when the connection ends)."""
        self.nick = settings.nick
        self.source = ""
        """``nick!user@host`` as others see us, once the server has shown it."""
        self.casemapping = "rfc1459"
        self.chantypes = "#&"
        self.caps: set[str] = set()
        self.ready = asyncio.Event()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pacer = Pacer(settings.flood)
        self._sending = asyncio.Lock()
        self._timers: set[asyncio.Task[None]] = set()
        self._regained_at = 0.0

    # --- connecting ------------------------------------------------------------------

    def _tls_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.settings.ca_file)
        if not self.settings.tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    async def _open(self) -> None:
        settings = self.settings
        tls = self._tls_context() if settings.tls == "tls" else None
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(settings.server, settings.port, ssl=tls),
                CONNECT_SECONDS,
            )
        except ssl.SSLCertVerificationError as exc:
            raise _untrusted(settings, exc) from None
        if settings.tls == "starttls":
            await self._starttls()

    async def _starttls(self) -> None:
        refused = (
            f"{self.settings.server} does not upgrade to TLS (STARTTLS): set "
            "platforms.irc.tls to tls and the port to its TLS port (6697)"
        )
        self._write(format_line("STARTTLS"))
        try:
            while True:
                line = await self._read(STARTTLS_SECONDS)
                if line.command == "670":
                    break
                if line.command in ("691", "421", "451"):
                    raise PlatformNotConfigured(f"{refused} ({line.param(-1) or line.command})")
        except TimeoutError:
            raise PlatformNotConfigured(f"{refused} (no answer)") from None
        assert self._writer is not None and self._reader is not None
        # Bytes already read past the 670 came in the clear: an attacker's, to be taken
        # for the server's once TLS is up (the STARTTLS injection of CVE-2011-0411).
        if getattr(self._reader, "_buffer", b""):
            raise ConnectionError("plain text followed STARTTLS's answer; not trusted")
        try:
            await self._writer.start_tls(self._tls_context(), server_hostname=self.settings.server)
        except ssl.SSLCertVerificationError as exc:
            raise _untrusted(self.settings, exc) from None

    def is_channel(self, target: str) -> bool:
        return bool(target) and target[0] in self.chantypes

    def same(self, left: str, right: str) -> bool:
        return casefold(left, self.casemapping) == casefold(right, self.casemapping)

    # --- running ---------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, register and join; then hand over what is heard until the connection
        ends (an exception says how)."""
        try:
            await self._open()
            await asyncio.wait_for(self._register(), REGISTER_SECONDS)
            await self._after_registration()
            await self._serve()
        finally:
            self.ready.clear()
            for timer in list(self._timers):
                timer.cancel()
            await self.close("Hermes is leaving")

    async def _register(self) -> None:
        settings = self.settings
        self._write(format_line("CAP", "LS", "302"))
        if settings.server_password:
            self._write(format_line("PASS", settings.server_password))
        self._write(format_line("NICK", self.nick))
        self._write(format_line("USER", settings.username, "0", "*", settings.realname))
        offered: set[str] = set()
        tries = 0
        welcomed = False
        while True:
            try:
                line = await self._read(MOTD_GRACE_SECONDS if welcomed else REGISTER_SECONDS)
            except TimeoutError:
                if welcomed:
                    break  # welcomed, and no MOTD came: registered all the same
                raise
            command = line.command
            if command == "CAP":
                offered |= self._capabilities(line, offered)
            elif command == "AUTHENTICATE" and line.param(0) == "+":
                self._authenticate()
            elif command == "903":
                self.logged_in = True
                self._write(format_line("CAP", "END"))
            elif command in ("902", "904", "905", "906", "907", "908"):
                raise PlatformNotConfigured(
                    f"{settings.server} refused the SASL login as {_sasl_name(settings)} "
                    f"({line.param(-1)}): check IRC_SASL_PASSWORD and platforms.irc.sasl"
                )
            elif command in _TAKEN or (command == "432" and tries > 0):
                tries += 1  # a fallback the server finds too long is one more try
                if tries > NICK_TRIES:
                    raise ConnectionError(f"every nick tried is in use ({self.nick})")
                self.nick = _another(settings.nick, tries)
                self._write(format_line("NICK", self.nick))
            elif command == "432":
                raise PlatformNotConfigured(
                    f"{settings.server} refuses the nick {self.nick!r} ({line.param(-1)}): "
                    "set platforms.irc.nick to another"
                )
            elif command == "464":
                raise PlatformNotConfigured(
                    f"{settings.server} refused the server password: check IRC_SERVER_PASSWORD"
                )
            elif command == "465":
                raise PlatformNotConfigured(
                    f"{settings.server} has banned this connection: {line.param(-1)}"
                )
            elif command == "ERROR":
                raise ConnectionError(f"the server refused the connection: {line.param(-1)}")
            elif command == "001":
                self.nick = line.param(0) or self.nick
                welcomed = True
            elif command == "005":
                self._isupport(line.params[1:-1])
            elif command in ("376", "422"):
                break
        self._check_registration()

    def _check_registration(self) -> None:
        """What was asked for and silently not given is a setting to fix, not a quiet
        downgrade: a login that did not happen, sender accounts the server cannot vouch
        for."""
        settings = self.settings
        if settings.sasl is not None and not self.logged_in:
            raise PlatformNotConfigured(
                f"{settings.server} registered the bot without a SASL login (it ignored CAP): "
                "leave platforms.irc.sasl off and use IRC_NICKSERV_PASSWORD"
            )
        if settings.identity == "account" and "account-tag" not in self.caps:
            raise PlatformNotConfigured(
                f"{settings.server} does not tell who is logged in (no IRCv3 account-tag): "
                "platforms.irc.identity: account needs it; use identity: nick there"
            )

    def _capabilities(self, line: Line, offered: set[str]) -> set[str]:
        """One CAP reply: LS (maybe several lines), ACK or NAK."""
        sub = line.param(1).upper()
        listed = {item.split("=", 1)[0] for item in line.param(-1).split()}
        wants_sasl = self.settings.sasl is not None
        if sub == "LS":
            if line.param(2) == "*":
                return listed  # more to come
            everything = offered | listed
            if wants_sasl and "sasl" not in everything:
                raise PlatformNotConfigured(
                    f"{self.settings.server} offers no SASL: leave platforms.irc.sasl off and "
                    "use IRC_NICKSERV_PASSWORD, or connect to a server that has it"
                )
            wanted = [cap for cap in WANTED_CAPS if cap in everything]
            if wants_sasl:
                wanted.append("sasl")
            if wanted:
                self._write(format_line("CAP", "REQ", " ".join(wanted)))
            else:
                self._write(format_line("CAP", "END"))
            return listed
        if sub == "ACK":
            self.caps |= listed
            if "sasl" in listed:
                self._write(format_line("AUTHENTICATE", "PLAIN"))
            else:
                self._write(format_line("CAP", "END"))
        elif sub == "NAK":
            if wants_sasl and "sasl" in listed:
                raise PlatformNotConfigured(f"{self.settings.server} would not start SASL")
            self._write(format_line("CAP", "END"))
        return set()

    def _authenticate(self) -> None:
        sasl = self.settings.sasl
        assert sasl is not None
        raw = f"{sasl.username}\0{sasl.username}\0{sasl.password}".encode()
        encoded = base64.b64encode(raw).decode()
        chunks = [encoded[at : at + SASL_CHUNK] for at in range(0, len(encoded), SASL_CHUNK)]
        if not chunks or len(chunks[-1]) == SASL_CHUNK:
            chunks.append("+")  # a last chunk of exactly 400 bytes is followed by "+"
        for chunk in chunks:
            self._write(format_line("AUTHENTICATE", chunk))

    def _isupport(self, tokens: Sequence[str]) -> None:
        for token in tokens:
            key, _, value = token.partition("=")
            if key == "CASEMAPPING" and value in ("ascii", "rfc1459", "strict-rfc1459"):
                self.casemapping = "ascii" if value == "ascii" else "rfc1459"
            elif key == "CHANTYPES" and value:
                self.chantypes = value

    async def _after_registration(self) -> None:
        settings = self.settings
        if settings.nickserv_password and not self.logged_in:
            await self._identify()
        if settings.channels:
            self._write(format_line("JOIN", ",".join(settings.channels)))
        self._regained_at = time.monotonic()
        self.registered = True
        self.ready.set()
        log.info("irc: connected to %s as %s", settings.server, self.nick)

    async def _identify(self) -> None:
        """IDENTIFY to NickServ, but only to a NickServ the server says is a service (an
        ordinary user can take the nick NickServ where there are no services); then wait
        for the login (900) or NickServ's word, a few seconds, so channels that need it
        let the bot in."""
        settings = self.settings
        self._write(format_line("WHOIS", "NickServ"))
        service, deadline = False, time.monotonic() + IDENTIFY_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = await self._read(left)
            except TimeoutError:
                break
            if line.command == "313" and self.same(line.param(1), "NickServ"):
                service = True  # "is a Network Service" (or an operator)
            elif line.command in ("318", "401"):
                break
            else:
                self._mind(line)
        if not service:
            log.warning(
                "irc: NickServ on %s is not a network service; IRC_NICKSERV_PASSWORD was not "
                "sent to it",
                settings.server,
            )
            return
        identify = f"IDENTIFY {settings.nick} {settings.nickserv_password}"
        self._write(format_line("PRIVMSG", "NickServ", identify))
        deadline = time.monotonic() + IDENTIFY_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = await self._read(left)
            except TimeoutError:
                break
            if line.command == "900" or (
                line.command == "NOTICE" and self.same(line.nick, "NickServ")
            ):
                self.logged_in = line.command == "900" or self.logged_in
                break
            self._mind(line)

    async def _serve(self) -> None:
        pinged = False
        while True:
            try:
                line = await self._read(IDLE_SECONDS)
            except TimeoutError:
                if pinged:
                    raise ConnectionError(
                        f"{self.settings.server} has been silent for {2 * IDLE_SECONDS:.0f} s"
                    ) from None
                self._write(format_line("PING", "hermes"))
                pinged = True
                continue
            pinged = False
            self._mind(line)

    def _mind(self, line: Line) -> None:
        """What the connection keeps track of itself; the rest goes on."""
        command = line.command
        ours = bool(line.source) and self.same(line.nick, self.nick)
        if command == "NICK" and ours:
            old, self.nick = line.nick, line.param(0)
            if self.source:  # our lines are relayed with the new nick in front from now on
                self.source = self.nick + self.source[len(old) :]
        elif command == "JOIN" and ours:
            self.source = line.source.replace(line.nick, self.nick, 1)
        elif command == "396" and "@" in self.source:  # the server hid our host
            self.source = f"{self.source.split('@', 1)[0]}@{line.param(1)}"
        elif command == "KICK" and self.same(line.param(1), self.nick):
            log.warning("irc: kicked from %s: %s", line.param(0), line.param(-1))
            self._later(REJOIN_SECONDS, format_line("JOIN", line.param(0)))
        elif command in ("471", "473", "474", "475", "403", "405"):
            log.warning("irc: cannot join %s: %s", line.param(1), line.param(-1))
        elif command in ("401", "404"):
            log.warning("irc: %s: %s", line.param(1), line.param(-1))
            self._refused(line.param(1), line.param(-1))
        elif command == "ERROR":
            raise ConnectionError(f"the server closed the connection: {line.param(-1)}")
        else:
            self._heard(line)
        if not self.same(self.nick, self.settings.nick) and (
            time.monotonic() - self._regained_at > REGAIN_SECONDS
        ):
            self._regained_at = time.monotonic()
            self._write(format_line("NICK", self.settings.nick))

    def _later(self, seconds: float, data: bytes) -> None:
        async def write() -> None:
            await asyncio.sleep(seconds)
            if self.ready.is_set():
                self._write(data)

        task = asyncio.ensure_future(write())
        self._timers.add(task)
        task.add_done_callback(self._timers.discard)

    # --- reading and writing ---------------------------------------------------------

    async def _read(self, timeout: float) -> Line:
        """The next line, PINGs answered on the way."""
        assert self._reader is not None
        while True:
            raw = await asyncio.wait_for(self._reader.readline(), timeout)
            if not raw:
                raise ConnectionError(f"{self.settings.server} closed the connection")
            line = parse_line(raw.decode("utf-8", errors="replace"))
            if line is None:
                continue
            if line.command == "PING":
                self._write(format_line("PONG", *line.params))
                continue
            return line

    def _write(self, data: bytes) -> None:
        if self._writer is None or self._writer.is_closing():
            raise ConnectionError("the connection is closed")
        self._writer.write(data)

    def room_source(self) -> str:
        """Our source as the server relays it, or the longest it may be."""
        return self.source or f"{self.nick}!~{self.settings.username}@{'h' * 63}"

    async def say(self, target: str, text: str, prefix: str = "") -> int:
        """Send ``text`` to ``target`` as IRC lines (``prefix`` first), in order, none of
        another reply between them, at the pace the flood rules allow; how many lines.
        The lines are cut once the turn to send has come, for the source the server
        relays then (a nick change meanwhile changes the room). :class:`NotConnected` when
        the connection is or goes down (with how many lines were written)."""
        sent = 0
        async with self._sending:
            room = room_for_text(self.room_source(), target)
            lines = to_lines(text, room, prefix) or ["(an empty reply)"]
            for line in lines:
                if not self.ready.is_set() or self._writer is None:
                    raise NotConnected(sent)
                await self._pacer.wait()
                try:
                    self._write(format_line("PRIVMSG", target, line))
                except (ConnectionError, OSError):
                    raise NotConnected(sent) from None
                sent += 1  # written: it may reach the server whatever drain says next
                try:
                    await self._writer.drain()
                except (ConnectionError, OSError):
                    raise NotConnected(sent) from None
        return sent

    async def close(self, reason: str = "") -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            if reason and not writer.is_closing():
                writer.write(format_line("QUIT", reason))
                await asyncio.wait_for(writer.drain(), 2.0)
            writer.close()
            await asyncio.wait_for(writer.wait_closed(), 2.0)
        except (OSError, TimeoutError, ssl.SSLError):
            pass


def _another(nick: str, tries: int) -> str:
    """A taken nick's fallbacks: hermes-bot_, then (for a server whose NICKLEN the longer
    one passes) hermes-bo_, hermes-b__, then hermes-bo3, hermes-bo4 ..."""
    if tries == 1:
        return nick + "_"
    if tries == 2:
        return nick[: max(1, len(nick) - 1)] + "_"
    if tries == 3:
        return nick[: max(1, len(nick) - 2)] + "__"
    return nick[: max(1, len(nick) - 1)] + str(tries)


def _sasl_name(settings: IrcSettings) -> str:
    return settings.sasl.username if settings.sasl else settings.nick


def _untrusted(settings: IrcSettings, exc: ssl.SSLCertVerificationError) -> PlatformNotConfigured:
    return PlatformNotConfigured(
        f"{settings.server}'s TLS certificate is not trusted ({exc.verify_message}): set "
        "platforms.irc.ca_file to its CA, or tls_verify: false for a server you run yourself"
    )
