"""A real IRC server for tests: Debian's ngircd on a free port of 127.0.0.1, with a private
config (no PAM, no ident, no DNS; its own flood throttling as shipped), and
:class:`IrcUser`, a raw IRC client in a thread that plays a person.

ngircd starts in well under a second; a test run starts one (the ``irc_server`` session
fixture) and every test takes fresh nicks and channels on it."""

from __future__ import annotations

import contextlib
import itertools
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hermes_plugin_platform_irc.wire import Line, casefold, format_line, parse_line
from hermes_testkit.services import ServiceUnavailable, free_port, unavailable, wait_listening

__all__ = ["Heard", "IrcServer", "IrcUser", "fresh", "irc_server", "irc_server_fixture"]

_names = itertools.count(1)


def fresh(prefix: str) -> str:
    """A nick or channel name no other test of this run uses."""
    return f"{prefix}{next(_names)}"


@dataclass(frozen=True)
class Heard:
    source: str
    target: str
    text: str
    command: str = "PRIVMSG"

    @property
    def nick(self) -> str:
        return self.source.split("!", 1)[0]


@dataclass
class IrcServer:
    port: int
    log_file: Path
    tls_port: int = 0
    """ngircd's TLS port (a certificate for 127.0.0.1 and localhost, signed by ``ca_file``)."""
    ca_file: str = ""
    host: str = "127.0.0.1"
    users: list[IrcUser] = field(default_factory=list)

    def user(self, nick: str | None = None, channels: tuple[str, ...] = ()) -> IrcUser:
        """A person connected and registered (and in ``channels``), disconnected at the end
        of the run if the test does not."""
        person = IrcUser(self.host, self.port, nick or fresh("user"))
        person.connect()
        for channel in channels:
            person.join(channel)
        self.users.append(person)
        return person

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


class IrcUser:
    """A person on IRC over a raw socket: what they hear is kept in :attr:`heard`."""

    def __init__(self, host: str, port: int, nick: str) -> None:
        self.host, self.port, self.nick = host, port, nick
        self.heard: list[Heard] = []
        self.lines: list[Line] = []
        self.closed = threading.Event()
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None

    def connect(self) -> None:
        self._socket = socket.create_connection((self.host, self.port), timeout=10)
        self._socket.settimeout(None)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.raw(format_line("NICK", self.nick))
        user = "".join(c for c in self.nick.lower() if c.isalnum())[:10] or "user"
        self.raw(format_line("USER", user, "0", "*", self.nick))
        self.wait_for_line(lambda line: line.command in ("376", "422"))

    def _read(self) -> None:
        assert self._socket is not None
        buffer = b""
        while True:
            try:
                data = self._socket.recv(65536)
            except OSError:
                break
            if not data:
                break
            buffer += data
            while b"\r\n" in buffer:
                raw, buffer = buffer.split(b"\r\n", 1)
                line = parse_line(raw.decode("utf-8", errors="replace"))
                if line is None:
                    continue
                if line.command == "PING":
                    self.raw(format_line("PONG", *line.params))
                    continue
                with self._lock:
                    self.lines.append(line)
                    if line.command in ("PRIVMSG", "NOTICE"):
                        self.heard.append(
                            Heard(line.source, line.param(0), line.param(1), line.command)
                        )
        self.closed.set()

    def raw(self, data: bytes) -> None:
        assert self._socket is not None
        with contextlib.suppress(OSError):
            self._socket.sendall(data)

    def join(self, channel: str) -> None:
        self.raw(format_line("JOIN", channel))
        self.wait_for_line(
            lambda line: line.command == "366" and casefold(line.param(1)) == casefold(channel)
        )

    def say(self, target: str, text: str) -> None:
        self.raw(format_line("PRIVMSG", target, text))

    def ctcp(self, target: str, what: str) -> None:
        self.raw(format_line("PRIVMSG", target, f"\x01{what}\x01"))

    def notice(self, target: str, text: str) -> None:
        self.raw(format_line("NOTICE", target, text))

    def wait_for_line(self, wanted: Callable[[Line], bool], timeout: float = 15.0) -> Line:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for line in self.lines:
                    if wanted(line):
                        return line
            time.sleep(0.02)
        raise AssertionError(f"{self.nick} never got the line wanted; got {self.lines[-5:]}")

    def heard_from(self, nick: str, target: str | None = None) -> list[Heard]:
        with self._lock:
            return [
                h
                for h in self.heard
                if casefold(h.nick) == casefold(nick)
                and (target is None or casefold(h.target) == casefold(target))
                and h.command == "PRIVMSG"
            ]

    def round_trip(self, timeout: float = 10.0) -> None:
        """PING the server and wait for its PONG: what was sent before is processed (and
        passed on to whoever it was for), then a moment for them to read it."""
        token = f"rt{time.monotonic_ns()}"
        self.raw(format_line("PING", token))
        self.wait_for_line(lambda line: line.command == "PONG" and token in line.params, timeout)
        time.sleep(0.2)

    def online(self, nick: str, timeout: float = 20.0) -> None:
        """Wait until ``nick`` is on the server (asked with ISON, every half second)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.raw(format_line("ISON", nick))
            time.sleep(0.5)
            with self._lock:
                if any(
                    line.command == "303" and casefold(nick) in casefold(line.param(-1)).split()
                    for line in self.lines
                ):
                    return
        raise AssertionError(f"{nick} never came online")

    def quit(self) -> None:
        self.raw(format_line("QUIT", "bye"))
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()


_CONFIG = """[Global]
Name = irc.test.example
Info = Hermes test server
Listen = 127.0.0.1
Ports = {port}
ServerUID = {uid}
ServerGID = {gid}
MotdPhrase = Hermes test server
[Limits]
MaxConnectionsIP = 0
MaxJoins = 0
MaxNickLength = 30
PingTimeout = 120
PongTimeout = 20
[Options]
PAM = no
Ident = no
DNS = no
[SSL]
CertFile = {cert}
KeyFile = {key}
Ports = {tls_port}
"""


def _certificate(base: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost (its own CA), by openssl."""
    cert, key = base / "server.pem", base / "server.key"
    made = subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert),
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        capture_output=True,
        check=False,
    )  # fmt: skip
    if made.returncode != 0:
        raise ServiceUnavailable(f"openssl could not make a certificate: {made.stderr[-300:]!r}")
    key.chmod(0o644)  # ngircd reads it after dropping to nobody
    return cert, key


@contextlib.contextmanager
def irc_server(port: int = 0) -> Iterator[IrcServer]:
    """ngircd on ``port`` (a free one if 0) of 127.0.0.1, with a TLS port beside it,
    stopped afterwards."""
    binary = shutil.which("ngircd") or (
        "/usr/sbin/ngircd" if Path("/usr/sbin/ngircd").exists() else None
    )
    if binary is None:
        raise ServiceUnavailable("ngircd is not installed (apt-get install ngircd)")
    with tempfile.TemporaryDirectory(prefix="hermes-irc-") as folder:
        base = Path(folder)
        base.chmod(0o755)
        port = port or free_port()
        tls_port = free_port()
        cert, key = _certificate(base)
        config = base / "ngircd.conf"
        config.write_text(
            _CONFIG.format(
                port=port, uid="nobody", gid="nogroup", cert=cert, key=key, tls_port=tls_port
            )
        )
        log_file = base / "ngircd.log"
        with open(log_file, "wb") as output:
            process = subprocess.Popen(
                [binary, "-n", "-f", str(config)], stdout=output, stderr=subprocess.STDOUT
            )
        server: IrcServer | None = None
        try:
            wait_listening(port, process, log_file, "ngircd")
            server = IrcServer(port=port, log_file=log_file, tls_port=tls_port, ca_file=str(cert))
            yield server
        finally:
            for user in server.users if server is not None else []:
                user.quit()
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="session", name="irc_server")
def irc_server_fixture() -> Iterator[IrcServer]:
    """A real IRC server (Debian's ngircd) on 127.0.0.1 for the whole run."""
    try:
        with irc_server() as server:
            yield server
    except ServiceUnavailable as exc:
        unavailable("an IRC server (ngircd)", exc)
