"""A real IRC bouncer for tests: Debian's ZNC between the bot and an :class:`IrcServer`.

ZNC stays on the network while the gateway is away and plays its buffer back when the
gateway connects, each line with the ``time`` tag of when it arrived. With
``keep_buffer`` the buffer is not cleared after a playback, so every reconnect plays the
same lines again: the duplicates a bouncer really sends."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes_plugin_platform_irc.testing.server import IrcServer
from hermes_testkit.services import ServiceUnavailable, free_port, wait_listening

__all__ = ["Bouncer", "znc_bouncer"]

RUNS_AS = "nobody"
"""ZNC waits 30 s before it runs as root; it runs as this user instead."""


@dataclass(frozen=True)
class Bouncer:
    port: int
    nick: str
    password: str
    """What the bot sends as its server password (``USER/NETWORK:PASSWORD``)."""


_CONFIG = """Version = 1.8.2
<Listener hermes>
  Port = {port}
  IPv4 = true
  IPv6 = false
  SSL = false
  Host = 127.0.0.1
</Listener>
<User hermes>
  <Pass password>
    Method = sha256
    Hash = {hash}
    Salt = {salt}
  </Pass>
  Nick = {nick}
  AltNick = {nick}_
  Ident = {ident}
  RealName = Hermes
  AutoClearChanBuffer = {clear}
  AutoClearQueryBuffer = {clear}
  ChanBufferSize = 100
  <Network test>
    Server = 127.0.0.1 {upstream}
{channels}  </Network>
</User>
"""


@contextlib.contextmanager
def znc_bouncer(
    server: IrcServer, nick: str, channels: tuple[str, ...] = (), keep_buffer: bool = True
) -> Iterator[Bouncer]:
    """ZNC on a free port of 127.0.0.1, connected to ``server`` as ``nick`` (in
    ``channels``) until the end of the block."""
    binary = shutil.which("znc")
    if binary is None:
        raise ServiceUnavailable("ZNC is not installed (apt-get install znc)")
    if os.geteuid() != 0:
        raise ServiceUnavailable("running ZNC as its own user needs root")
    with tempfile.TemporaryDirectory(prefix="hermes-znc-") as folder:
        base = Path(folder)
        (base / "configs").mkdir()
        port, password, salt = free_port(), secrets.token_hex(8), secrets.token_hex(10)
        chans = "".join(f"    <Chan {name}>\n    </Chan>\n" for name in channels)
        (base / "configs" / "znc.conf").write_text(
            _CONFIG.format(
                port=port,
                hash=hashlib.sha256((password + salt).encode()).hexdigest(),
                salt=salt,
                nick=nick,
                ident="".join(c for c in nick.lower() if c.isalnum())[:10] or "hermes",
                clear="false" if keep_buffer else "true",
                upstream=server.port,
                channels=chans,
            )
        )
        shutil.chown(base, RUNS_AS)
        for path in base.rglob("*"):
            shutil.chown(path, RUNS_AS)
        log_file = base / "znc.log"
        with open(log_file, "wb") as output:
            process = subprocess.Popen(
                [binary, "--foreground", "--datadir", str(base)],
                stdout=output,
                stderr=subprocess.STDOUT,
                user=RUNS_AS,
            )
        try:
            wait_listening(port, process, log_file, "ZNC", seconds=20)
            yield Bouncer(port=port, nick=nick, password=f"hermes/test:{password}")
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
