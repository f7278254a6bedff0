"""A received message, as the gateway should see it, or why it must not be answered.

Mail that no person wrote (auto-replies, bounces, bulk and list mail) is never answered:
answering it is how reply loops start. What a person wrote is read as text/plain where the
sender gave it, else its HTML as text, with the quoted history of the thread cut off (the
transcript already has it) and attachments named in a note.
"""

from __future__ import annotations

import email
import email.policy
import logging
import re
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import getaddresses, parseaddr
from functools import lru_cache
from typing import Any

__all__ = ["HERMES_HEADER", "Mail", "Skipped", "read_mail"]

HERMES_HEADER = "X-Hermes-Agent"
"""Set on everything Hermes sends, so its own messages are recognised wherever they land."""
_AUTOMATED_SENDER = re.compile(
    r"^(no-?reply|do-?not-?reply|mailer-daemon|postmaster|bounces?|notifications?|daemon)"
    r"([+.\-_].*)?@",
    re.IGNORECASE,
)
_BULK = {"bulk", "list", "junk", "auto_reply"}
_VERDICT = re.compile(r"\b(dkim|spf|dmarc)\s*=\s*(\w+)", re.IGNORECASE)
_LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "pl", "ja", "zh"]
_MAX_TEXT = 20_000


@dataclass(frozen=True, slots=True)
class Mail:
    message_id: str
    sender: str
    """The From address, lower case: the user id."""
    sender_name: str
    subject: str
    in_reply_to: str | None
    references: tuple[str, ...]
    text: str
    files: tuple[MailFile, ...] = ()
    """Its attachments, read by the adapter for an allowed sender."""


@dataclass(frozen=True, slots=True)
class Skipped:
    reason: str
    sender: str = ""


def _ids(value: object) -> tuple[str, ...]:
    return tuple(re.findall(r"<[^<>\s]+>", str(value or "")))


def _automated(message: EmailMessage, sender: str) -> str | None:
    auto = str(message.get("Auto-Submitted", "")).strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = str(message.get("Precedence", "")).strip().lower()
    if precedence in _BULK:
        return f"Precedence: {precedence}"
    for header in ("List-Id", "List-Unsubscribe", "X-Auto-Response-Suppress"):
        if message.get(header) is not None:
            return f"it has {header}"
    if _AUTOMATED_SENDER.match(sender):
        return f"the sender {sender} is automated"
    if str(message.get("Return-Path", "")).strip() == "<>":
        return "it is a bounce (empty Return-Path)"
    return None


def _failed_authentication(message: EmailMessage) -> str | None:
    """The receiving server's verdict (its Authentication-Results, the topmost one)."""
    results = message.get_all("Authentication-Results") or []
    if not results:
        return None
    for method, verdict in _VERDICT.findall(str(results[0])):
        if verdict.lower() in {"fail", "permerror"}:
            return f"{method.lower()}={verdict.lower()} in Authentication-Results"
    return None


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = str(part.get_content())
    except (LookupError, UnicodeError):
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if part.get_content_subtype() == "html":
        import html2text

        converter = html2text.HTML2Text()
        converter.body_width = 0
        converter.ignore_images = True
        content = converter.handle(content)
    return content


@lru_cache(maxsize=1)
def _reply_parser() -> Any:
    from mailparser_reply import EmailReplyParser

    logging.getLogger("mailparser_reply").setLevel(logging.INFO)  # it logs its regexes
    return EmailReplyParser(languages=_LANGUAGES)


def _without_quotes(text: str) -> str:
    try:
        reply = _reply_parser().parse_reply(text=text)
    except Exception:  # noqa: BLE001 - a parser's trouble must not lose the message
        return text.strip()
    return (reply or text).strip()


@dataclass(frozen=True, slots=True)
class MailFile:
    """An attachment as the mail carries it, before it is checked."""

    name: str
    declared: str
    data: bytes


def _attachments(message: EmailMessage) -> list[MailFile]:
    files = []
    for part in message.iter_attachments():
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        files.append(MailFile(part.get_filename() or "unnamed", part.get_content_type(), data))
    return files


def read_mail(raw: bytes, own_address: str) -> Mail | Skipped:
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    name, sender = parseaddr(str(parsed.get("From", "")))
    sender = sender.strip().lower()
    if not sender or "@" not in sender:
        return Skipped("it has no sender address")
    if parsed.get(HERMES_HEADER) is not None or sender == own_address.lower():
        return Skipped("Hermes sent it", sender)
    senders = getaddresses([str(v) for v in parsed.get_all("From") or []])
    if len(senders) != 1:
        return Skipped("it has more than one From address", sender)
    why = _automated(parsed, sender) or _failed_authentication(parsed)
    if why is not None:
        return Skipped(why, sender)
    subject = " ".join(str(parsed.get("Subject", "")).split())
    message_id = (_ids(parsed.get("Message-ID")) or ("",))[0]
    in_reply_to = (_ids(parsed.get("In-Reply-To")) or (None,))[0]
    references = _ids(parsed.get("References"))
    text = _without_quotes(_body(parsed))[:_MAX_TEXT]
    files = _attachments(parsed)
    if not in_reply_to and not references and subject:
        text = f"Subject: {subject}\n\n{text}"  # a new thread: its subject says what it is about
    text = text.strip() or ("" if files else "(an empty message)")
    return Mail(message_id, sender, name, subject, in_reply_to, references, text, tuple(files))
