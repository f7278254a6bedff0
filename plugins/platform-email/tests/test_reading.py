"""What is answered, and what the model reads of it, without a server."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from hermes_plugin_platform_email.reading import HERMES_HEADER, Mail, Skipped, read_mail
from hermes_plugin_platform_email.settings import EmailSettings

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

OWN = "hermes@example.org"


def mail(text: str = "hello", sender: str = "Ann <ann@example.org>", **headers: str) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = OWN
    message["Subject"] = headers.pop("Subject", "A question")
    message["Message-ID"] = "<one@example.org>"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(text)
    return message.as_bytes()


@pytest.mark.parametrize(
    ("headers", "sender", "why"),
    [
        ({"Auto_Submitted": "auto-replied"}, "ann@example.org", "Auto-Submitted"),
        ({"Precedence": "bulk"}, "ann@example.org", "Precedence"),
        ({"List_Id": "<list.example.org>"}, "ann@example.org", "List-Id"),
        ({"X_Auto_Response_Suppress": "All"}, "ann@example.org", "X-Auto-Response-Suppress"),
        ({}, "noreply@example.org", "automated"),
        ({}, "MAILER-DAEMON@example.org", "automated"),
        ({HERMES_HEADER.replace("-", "_"): "reply"}, "ann@example.org", "Hermes sent it"),
        ({}, OWN, "Hermes sent it"),
        (
            {"Authentication_Results": "mx.example.org; dkim=fail; spf=pass"},
            "ann@example.org",
            "dkim=fail",
        ),
        (
            {"Authentication_Results": "mx.example.org; spf=fail smtp.mailfrom=x"},
            "ann@example.org",
            "spf=fail",
        ),
    ],
)
def test_mail_no_person_wrote_is_not_answered(headers, sender, why):
    read = read_mail(mail(sender=sender, **headers), OWN)
    assert isinstance(read, Skipped) and why in read.reason


def test_a_passing_verdict_and_auto_submitted_no_are_answered():
    read = read_mail(
        mail(Auto_Submitted="no", Authentication_Results="mx; dkim=pass; spf=pass"), OWN
    )
    assert isinstance(read, Mail) and read.sender == "ann@example.org"


def test_a_new_thread_reads_with_its_subject_and_a_reply_without_its_quote():
    new = read_mail(mail("Which train?"), OWN)
    assert isinstance(new, Mail) and new.text == "Subject: A question\n\nWhich train?"
    reply = read_mail(
        mail(
            "Yes, the early one.\n\nOn Mon, 1 Dec 2026, Hermes <hermes@example.org> wrote:\n> Take the 8:00.\n",
            In_Reply_To="<zero@example.org>",
            References="<zero@example.org>",
        ),
        OWN,
    )
    assert isinstance(reply, Mail)
    assert reply.text == "Yes, the early one."
    assert reply.references == ("<zero@example.org>",)


def test_html_becomes_text_and_attachments_are_kept_for_the_adapter():
    message = EmailMessage()
    message["From"] = "ann@example.org"
    message["Subject"] = "Report"
    message.set_content("<p>See <b>this</b> report</p>", subtype="html")
    message.add_attachment(
        b"%PDF-1.4 ...", maintype="application", subtype="pdf", filename="q3.pdf"
    )
    read = read_mail(message.as_bytes(), OWN)
    assert isinstance(read, Mail)
    assert "See **this** report" in read.text
    (pdf,) = read.files
    assert (pdf.name, pdf.declared, pdf.data) == ("q3.pdf", "application/pdf", b"%PDF-1.4 ...")


def settings(**config: object) -> EmailSettings:
    base = {"address": OWN, "imap_host": "imap.example.org", "smtp_host": "smtp.example.org"}
    return EmailSettings.from_context(
        PlatformContext(
            name="email", home="/tmp", config={**base, **config}, secrets={"EMAIL_PASSWORD": "pw"}
        )
    )


def test_tls_none_is_refused_off_this_machine():
    with pytest.raises(PlatformNotConfigured, match="allowed only for servers on this machine"):
        settings(tls="none")
    assert settings(tls="none", imap_host="127.0.0.1", smtp_host="localhost").smtp_port == 25
    assert (settings().imap_port, settings().smtp_port) == (993, 465)
    assert settings(tls="starttls").smtp_port == 587
    with pytest.raises(PlatformNotConfigured, match="implicit, starttls or none"):
        settings(tls="ssl")
