"""Real email for platform tests: Dovecot's IMAP server and an SMTP server on loopback.

Dovecot (Debian's ``dovecot-imapd``) runs with a private config: plaintext IMAP on a free
port of 127.0.0.1, Maildirs under a temp folder, users from a passwd file. Beside it,
aiosmtpd accepts mail (with AUTH for any known user) and delivers each message into its
recipients' Maildirs, so Dovecot serves it; every message it takes is also kept in
:attr:`MailServer.sent`, so a test sees what was sent, to anyone. :class:`Mailbox` is a
person's mail client: it sends with smtplib and reads with imaplib.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import imaplib
import mailbox
import os
import pwd
import shutil
import smtplib
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest

from hermes_testkit.services import ServiceUnavailable, free_port, unavailable

__all__ = ["MailServer", "Mailbox", "mail_server"]

MAIL_USER = "hermes-mail"
DOMAIN = "mail.test"
PASSWORD = "mail-secret"


def _mail_uid() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(MAIL_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", MAIL_USER],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(MAIL_USER)
    return entry.pw_uid, entry.pw_gid


@dataclass
class MailServer:
    imap_port: int
    smtp_port: int
    root: Path
    uid: int
    gid: int
    passwd: Path
    """The addresses of the mailboxes, one per line."""
    sent: list[tuple[str, list[str], bytes]] = field(default_factory=list)
    """Every message the SMTP server took: (envelope from, recipients, the message)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add_user(self, local: str | None = None) -> Mailbox:
        """A new mailbox (a fresh name unless given). Every mailbox has the password
        ``mail-secret``: Dovecot's passdb is static, so a user added mid-run needs no reload
        (a passwd file is re-read only when its mtime changes, in whole seconds)."""
        name = local or f"u{os.getpid()}x{time.time_ns() % 10**9}"
        address = f"{name}@{DOMAIN}"
        with self._lock, self.passwd.open("a") as users:
            users.write(f"{address}\n")
        self._maildir(address)
        return Mailbox(self, address, PASSWORD)

    def _maildir(self, address: str) -> mailbox.Maildir:
        folder = self.root / address
        box = mailbox.Maildir(folder, create=True)
        for path in [folder, *folder.iterdir()]:
            os.chown(path, self.uid, self.gid)
        return box

    def deliver(self, sender: str, recipients: list[str], data: bytes) -> None:
        with self._lock:
            self.sent.append((sender, list(recipients), data))
            known = set(self.passwd.read_text().split())
        for recipient in recipients:
            address = recipient.lower()
            if address not in known:
                continue  # elsewhere: kept in `sent` only
            box = self._maildir(address)
            key = box.add(mailbox.MaildirMessage(data))
            os.chown(self.root / address / "new" / key, self.uid, self.gid)

    def sent_to(self, address: str) -> list[EmailMessage]:
        with self._lock:
            taken = list(self.sent)
        return [
            _parse(data)
            for _, recipients, data in taken
            if address.lower() in [r.lower() for r in recipients]
        ]


def _parse(data: bytes) -> EmailMessage:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


@dataclass
class Mailbox:
    """A person's mail account on the test server."""

    server: MailServer
    address: str
    password: str

    def send(
        self,
        to: str,
        subject: str,
        text: str,
        *,
        in_reply_to: EmailMessage | None = None,
        headers: dict[str, str] | None = None,
        html: str | None = None,
        attachment: tuple[str, bytes, str] | None = None,
        sender: str | None = None,
    ) -> EmailMessage:
        """Send a message (a reply to ``in_reply_to`` if given); returns it."""
        message = EmailMessage()
        message["From"] = sender or self.address
        message["To"] = to
        message["Subject"] = subject
        message["Message-ID"] = make_msgid(domain=DOMAIN)
        message["Date"] = email.utils.formatdate(localtime=True)
        if in_reply_to is not None:
            parent = str(in_reply_to["Message-ID"])
            message["In-Reply-To"] = parent
            message["References"] = f"{in_reply_to.get('References', '')} {parent}".strip()
        for name, value in (headers or {}).items():
            message[name] = value
        message.set_content(text)
        if html is not None:
            message.add_alternative(html, subtype="html")
        if attachment is not None:
            name, data, mime = attachment
            kind, _, sub = mime.partition("/")
            message.add_attachment(data, maintype=kind, subtype=sub, filename=name)
        with smtplib.SMTP("127.0.0.1", self.server.smtp_port, timeout=10) as smtp:
            smtp.login(self.address, self.password)
            smtp.send_message(message)
        return message

    def _imap(self) -> imaplib.IMAP4:
        client = imaplib.IMAP4("127.0.0.1", self.server.imap_port, timeout=10)
        client.login(self.address, self.password)
        return client

    def folder(self, name: str = "INBOX") -> list[EmailMessage]:
        """The messages in a folder of this mailbox, oldest first."""
        client = self._imap()
        try:
            status, _ = client.select(f'"{name}"', readonly=True)
            if status != "OK":
                return []
            _, found = client.uid("SEARCH", "ALL")
            messages = []
            for uid in found[0].split():
                _, parts = client.uid("FETCH", uid, "(BODY.PEEK[])")
                raw = next(p[1] for p in parts if isinstance(p, tuple))
                messages.append(_parse(raw))
            return messages
        finally:
            with contextlib.suppress(Exception):
                client.logout()


def _dovecot_config(base: Path, imap_port: int, uid: int, passwd: Path, mail_root: Path) -> Path:
    config = base / "dovecot.conf"
    config.write_text(
        f"""
base_dir = {base}/run
state_dir = {base}/state
log_path = {base}/dovecot.log
info_log_path = {base}/dovecot.log
listen = 127.0.0.1
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = {uid}
mail_location = maildir:{mail_root}/%u
default_internal_user = {MAIL_USER}
default_login_user = {MAIL_USER}
passdb {{
  driver = static
  args = password={PASSWORD}
}}
userdb {{
  driver = static
  args = uid={uid} gid={uid} home={mail_root}/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap_port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
namespace inbox {{
  inbox = yes
  separator = /
  mailbox Drafts {{
    special_use = \\Drafts
    auto = subscribe
  }}
  mailbox Sent {{
    special_use = \\Sent
    auto = subscribe
  }}
}}
"""
    )
    return config


class _Handler:
    def __init__(self, server: MailServer) -> None:
        self.server = server

    async def handle_DATA(self, smtp_server: Any, session: Any, envelope: Any) -> str:
        self.server.deliver(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content)
        return "250 Message accepted for delivery"


def _authenticator(passwd: Path) -> Any:
    from aiosmtpd.smtp import AuthResult, LoginPassword

    def check(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        if not isinstance(data, LoginPassword):
            return AuthResult(success=False, handled=False)
        known = data.login.decode().lower() in passwd.read_text().split()
        return AuthResult(success=known and data.password.decode() == PASSWORD)

    return check


@contextlib.contextmanager
def mail_server() -> Iterator[MailServer]:
    """A private Dovecot and SMTP server on 127.0.0.1, stopped afterwards."""
    dovecot = shutil.which("dovecot") or (
        "/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None
    )
    if dovecot is None:
        raise ServiceUnavailable("Dovecot is not installed (apt-get install dovecot-imapd)")
    if os.geteuid() != 0:
        raise ServiceUnavailable("running Dovecot with its own users needs root")
    try:
        from aiosmtpd.controller import Controller
    except ImportError:
        raise ServiceUnavailable("aiosmtpd is not installed (pip install aiosmtpd)") from None
    uid, gid = _mail_uid()
    with tempfile.TemporaryDirectory(prefix="hermes-mail-") as folder:
        base = Path(folder)
        os.chmod(base, 0o755)
        mail_root = base / "mail"
        mail_root.mkdir()
        os.chown(mail_root, uid, gid)
        passwd = base / "users"
        passwd.touch()
        passwd.chmod(0o644)
        imap_port, smtp_port = free_port(), free_port()
        config = _dovecot_config(base, imap_port, uid, passwd, mail_root)
        # Dovecot forks into the background: its output goes to a file, not to pipes that
        # the daemon would hold open (and a wait on them would never end).
        with open(base / "start.log", "wb") as output:
            started = subprocess.run(
                [dovecot, "-c", str(config)], stdout=output, stderr=subprocess.STDOUT, check=False
            )
        if started.returncode != 0:
            why = (base / "start.log").read_text(errors="replace").strip()[-400:]
            raise ServiceUnavailable(f"Dovecot did not start: {why}")
        server = MailServer(imap_port, smtp_port, mail_root, uid, gid, passwd)
        controller = Controller(
            _Handler(server),
            hostname="127.0.0.1",
            port=smtp_port,
            authenticator=_authenticator(passwd),
            auth_require_tls=False,
        )
        controller.start()
        try:
            deadline = time.monotonic() + 15
            while True:
                with (
                    contextlib.suppress(OSError),
                    socket.create_connection(("127.0.0.1", imap_port), timeout=1),
                ):
                    break
                if time.monotonic() > deadline:
                    log = (
                        (base / "dovecot.log").read_text(errors="replace")[-500:]
                        if (base / "dovecot.log").exists()
                        else ""
                    )
                    raise ServiceUnavailable(f"Dovecot did not listen: {log}")
                time.sleep(0.05)
            yield server
        finally:
            controller.stop()
            subprocess.run(
                [dovecot, "-c", str(config), "stop"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )


@pytest.fixture(scope="session", name="mail_server")
def mail_server_fixture() -> Iterator[MailServer]:
    """Real Dovecot (IMAP) and an SMTP server on 127.0.0.1; ``add_user()`` makes a mailbox."""
    try:
        with mail_server() as server:
            yield server
    except ServiceUnavailable as exc:
        unavailable("Dovecot and an SMTP server", exc)
