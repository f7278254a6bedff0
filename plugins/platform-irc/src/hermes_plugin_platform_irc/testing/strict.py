"""An IRC server with strict flood rules, for tests: Debian's InspIRCd, with its penalty
rules as a network that kills flooders sets them (``fakelag="no"``: past the threshold of
penalty, the client is disconnected with "Excess Flood", not slowed down; each line adds
one, one drains a second). ngircd only slows a fast sender down, which proves nothing
about being disconnected."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hermes_plugin_platform_irc.testing.server import IrcServer
from hermes_testkit.services import ServiceUnavailable, free_port, wait_listening

__all__ = ["inspircd_server"]

_CONFIG = """<server name="irc.strict.test" description="strict flood rules" network="Test">
<admin name="Admin" nick="admin" email="admin@example.org">
<bind address="127.0.0.1" port="{port}" type="clients">
<power diepass="{secret}" restartpass="{secret}">
<connect name="main" allow="*" maxchans="20" timeout="20" pingfreq="120"
 hardsendq="1M" softsendq="10240" recvq="10K" threshold="{threshold}" commandrate="1000"
 fakelag="no" localmax="100" globalmax="100" useident="no">
<files motd="{base}/motd.txt">
<dns timeout="1">
<pid file="{base}/inspircd.pid">
<options prefixquit="Quit: ">
<performance softlimit="1024" somaxconn="128" nouserdns="yes">
<log method="file" type="* -USERINPUT -USEROUTPUT" level="default" target="{base}/ircd.log">
"""


@contextlib.contextmanager
def inspircd_server(threshold: int = 5) -> Iterator[IrcServer]:
    """InspIRCd on a free port of 127.0.0.1 that disconnects a client whose penalty passes
    ``threshold`` lines (one drains each second)."""
    binary = shutil.which("inspircd") or (
        "/usr/sbin/inspircd" if Path("/usr/sbin/inspircd").exists() else None
    )
    if binary is None:
        raise ServiceUnavailable("InspIRCd is not installed (apt-get install inspircd)")
    with tempfile.TemporaryDirectory(prefix="hermes-inspircd-") as folder:
        base = Path(folder)
        port = free_port()
        (base / "motd.txt").write_text("Hermes strict test server\n")
        config = base / "inspircd.conf"
        config.write_text(
            _CONFIG.format(port=port, threshold=threshold, base=base, secret=os.urandom(8).hex())
        )
        command = [binary, "--config", str(config), "--nofork", "--nopid"]
        if os.geteuid() == 0:
            command.append("--runasroot")  # it refuses root without saying so
        log_file = base / "ircd.log"
        with open(base / "out.log", "wb") as output:
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            wait_listening(port, process, base / "out.log", "InspIRCd")
            server = IrcServer(port=port, log_file=log_file)
            try:
                yield server
            finally:
                for user in server.users:
                    user.quit()
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
