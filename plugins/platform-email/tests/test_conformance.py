"""The email adapter passes the platform conformance suite against real Dovecot and SMTP."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage

import pytest
from hermes_plugin_platform_email.adapter import EmailAdapter
from hermes_plugin_platform_email.testing import MailServer

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


def email_context(server: MailServer, address: str, home: str, **extra: object) -> PlatformContext:
    return PlatformContext(
        name="email",
        home=home,
        config={
            "address": address,
            "imap_host": "127.0.0.1",
            "imap_port": server.imap_port,
            "smtp_host": "127.0.0.1",
            "smtp_port": server.smtp_port,
            "tls": "none",
            **extra,
        },
        secrets={"EMAIL_PASSWORD": "mail-secret"},
    )


def text_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    return str(body.get_content()).replace("\r\n", "\n").strip()  # CRLF is the wire's


class TestEmailConformance(PlatformTests):
    @pytest.fixture(autouse=True)
    def mailboxes(self, mail_server: MailServer) -> Iterator[None]:
        self.server = mail_server
        self.hermes = mail_server.add_user()
        self.person = mail_server.add_user()
        self.user = self.person.address
        yield

    def make_adapter(self, context: PlatformContext) -> EmailAdapter:
        return EmailAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        context = email_context(self.server, self.hermes.address, home)
        if not configured:
            return PlatformContext(name="email", home=home, config=context.config, secrets={})
        return context

    def _from_hermes(self) -> list[EmailMessage]:
        return [m for m in self.person.folder() if self.hermes.address in str(m["From"])]

    def user_says(self, user_id: str, text: str) -> None:
        assert user_id == self.person.address
        # No subject: a new thread's subject is put before its text for the model, and the
        # suite checks the text as written.
        self.person.send(self.hermes.address, "", text)

    def seen_by(self, user_id: str) -> list[str]:
        return [text_of(m) for m in self._from_hermes()]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        question = self._from_hermes()[-1]
        self.person.send(
            self.hermes.address, f"Re: {question['Subject']}", choice, in_reply_to=question
        )
