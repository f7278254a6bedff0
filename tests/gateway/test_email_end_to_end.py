"""Conversations through the real email plugin, real Dovecot and SMTP, and the scripted model."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage

import pytest
from hermes_plugin_platform_email.testing import Mailbox, MailServer

from hermes_testkit import Reply
from hermes_testkit.media_files import disguised_program

from .conftest import RunningGateway, unfenced, wait_until


@pytest.fixture
def email_gateway(
    hermes, openai_server, mail_server: MailServer, tmp_path, monkeypatch
) -> Iterator[Callable[..., RunningGateway]]:
    monkeypatch.chdir(tmp_path)
    started: list[RunningGateway] = []

    def start(hermes_box: Mailbox, allowed: Mailbox, extra: str = "") -> RunningGateway:
        hermes.config(
            f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
            "gateway:\n  restart_backoff_seconds: 0.2\n  restart_backoff_max_seconds: 1\n"
            "  drain_seconds: 5\n"
            "platforms:\n  telegram:\n    enabled: false\n"
            f"  email:\n    address: {hermes_box.address}\n    imap_host: 127.0.0.1\n"
            f"    imap_port: {mail_server.imap_port}\n    smtp_host: 127.0.0.1\n"
            f"    smtp_port: {mail_server.smtp_port}\n    tls: none\n"
            f"    allowed_users: ['{allowed.address}']\n{extra}"
        )
        hermes.dotenv(f"EMAIL_PASSWORD={hermes_box.password}\n")
        gateway = RunningGateway(hermes.home).start()
        started.append(gateway)
        time.sleep(1)  # connected and idling
        return gateway

    yield start
    for gateway in started:
        if gateway.thread.is_alive():
            gateway.stop()


def replies_to(box: Mailbox, hermes_box: Mailbox, count: int) -> list[EmailMessage]:
    found: list[EmailMessage] = []

    def arrived() -> bool:
        found[:] = [m for m in box.folder() if hermes_box.address in str(m["From"])]
        return len(found) >= count

    wait_until(arrived, timeout=30)
    return found


def body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).strip()


def test_an_allowed_sender_gets_one_threaded_reply(email_gateway, mail_server, openai_server):
    hermes_box, owner, stranger = (
        mail_server.add_user(),
        mail_server.add_user(),
        mail_server.add_user(),
    )
    openai_server.queue(Reply.say("Here is your answer."), Reply.say("And a follow-up."))
    gateway = email_gateway(hermes_box, owner)
    asked = owner.send(hermes_box.address, "Trip planning", "Which train should I take?")
    (reply,) = replies_to(owner, hermes_box, 1)
    assert body(reply) == "Here is your answer."
    assert reply["Subject"] == "Re: Trip planning"
    assert reply["In-Reply-To"] == asked["Message-ID"]
    assert asked["Message-ID"] in reply["References"]
    assert reply["Auto-Submitted"] == "auto-replied"
    first_request = openai_server.requests[0].json["messages"]
    assert "Which train should I take?" in str(first_request[-1]["content"])

    # An answer to the reply, quoting it: the same thread and session, the quote cut off.
    owner.send(
        hermes_box.address,
        "Re: Trip planning",
        "Thanks! What about the return?\n\nOn Tue, Hermes wrote:\n> Here is your answer.\n",
        in_reply_to=reply,
    )
    replies = replies_to(owner, hermes_box, 2)
    assert replies[1]["In-Reply-To"] is not None
    users = [
        m["content"] for m in openai_server.requests[1].json["messages"] if m["role"] == "user"
    ]
    assert unfenced(users[-1]) == "Thanks! What about the return?"
    assert users[-1].startswith("[Untrusted data from email")  # issue 62
    # A mail from an allowed address may forward anyone's words: no shell, files or code.
    offered = {t["function"]["name"] for t in openai_server.requests[1].json.get("tools", [])}
    assert offered and not offered & {"terminal", "read_file", "write_file", "execute_code"}
    assert not offered & {"browser_navigate", "cronjob", "delegate_task", "memory"}
    assert len(gateway.sessions("email")) == 1

    # Neither an auto-reply nor a stranger reaches the model, and the stranger gets no mail.
    owner.send(
        hermes_box.address,
        "Out of office",
        "I am away.",
        headers={"Auto-Submitted": "auto-replied"},
    )
    stranger.send(hermes_box.address, "Hello", "Can you run a command for me?")
    owner.send(hermes_box.address, "Newsletter", "News!", headers={"List-Id": "<news.example>"})
    time.sleep(3)
    assert len(openai_server.requests) == 2
    assert mail_server.sent_to(stranger.address) == []


def test_draft_mode_saves_the_reply_and_sends_nothing(email_gateway, mail_server, openai_server):
    hermes_box, owner = mail_server.add_user(), mail_server.add_user()
    openai_server.queue(Reply.say("A draft for you to check."))
    email_gateway(hermes_box, owner, extra="    draft_mode: true\n")
    asked = owner.send(hermes_box.address, "Please draft", "Write a reply to my landlord.")
    wait_until(lambda: hermes_box.folder("Drafts"), timeout=30)
    (draft,) = hermes_box.folder("Drafts")
    assert body(draft) == "A draft for you to check."
    assert draft["In-Reply-To"] == asked["Message-ID"]
    time.sleep(1)
    assert mail_server.sent_to(owner.address) == []


def test_after_a_restart_each_message_is_processed_once(email_gateway, mail_server, openai_server):
    hermes_box, owner = mail_server.add_user(), mail_server.add_user()
    openai_server.queue(Reply.say("One."), Reply.say("Two."))
    gateway = email_gateway(hermes_box, owner)
    owner.send(hermes_box.address, "First", "the first message")
    replies_to(owner, hermes_box, 1)
    gateway.stop()
    owner.send(hermes_box.address, "Second", "sent while Hermes was down")
    email_gateway(hermes_box, owner)
    replies = replies_to(owner, hermes_box, 2)
    time.sleep(3)
    assert [body(m) for m in owner.folder() if hermes_box.address in str(m["From"])] == [
        "One.",
        "Two.",
    ]
    assert [body(m) for m in replies] == ["One.", "Two."]
    assert len(openai_server.requests) == 2


def test_attachments_are_read_and_a_disguised_one_is_named_refused(
    email_gateway, mail_server, openai_server
):
    hermes_box, owner = mail_server.add_user(), mail_server.add_user()
    openai_server.queue(Reply.say("The total is 22."), Reply.say("I could not open it."))
    email_gateway(hermes_box, owner)
    owner.send(
        hermes_box.address,
        "Figures",
        "Add these up, please.",
        attachment=("figures.csv", b"month,total\nJan,10\nFeb,12\n", "text/csv"),
    )
    replies_to(owner, hermes_box, 1)
    sent = str(openai_server.requests[0].json["messages"][-1]["content"])
    assert "Add these up, please." in sent
    assert "[document: figures.csv, text/csv, 26 bytes] (its text)\n[3 rows]" in sent
    owner.send(
        hermes_box.address,
        "Invoice",
        "Is this invoice right?",
        attachment=("invoice.pdf", disguised_program(), "application/pdf"),
    )
    replies_to(owner, hermes_box, 2)
    sent = unfenced(str(openai_server.requests[1].json["messages"][-1]["content"]))
    assert sent.endswith(
        "[invoice.pdf is refused: it is an executable program (application/x-executable) "
        "sent as application/pdf]"
    )
