"""The gateway with its home's store in PostgreSQL (``store.url``): a conversation with a
tool call, a pairing and a delivered reply all land in the database, none in state.db."""

from __future__ import annotations

import psycopg

from hermes_testkit import Reply

from .conftest import OWNER

STRANGER = 4242


def test_a_conversation_and_a_pairing_are_kept_in_postgresql(
    running_gateway, telegram, openai_server, hermes, postgres
):
    url = postgres.create_database()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "echo from-the-tool"}), Reply.say("It printed it.")
    )
    gateway = running_gateway(top=f"store:\n  url: {url}\n")
    telegram.user_says(OWNER, "run echo for me")
    telegram.wait_for_message(OWNER, "It printed it.")
    telegram.user_says(STRANGER, "let me in")
    telegram.wait_for_message(STRANGER, "code")
    (session,) = gateway.sessions("telegram")
    assert session.user_scope == f"telegram:{OWNER}" and session.message_count == 4
    assert not hermes.home.joinpath("state.db").exists()
    with psycopg.connect(url) as connection:
        delivered = connection.execute(
            "SELECT count(*) FROM outbox_entries WHERE state = 'delivered'"
        ).fetchone()
        pairing = connection.execute("SELECT user_id FROM gateway_pairing").fetchall()
        found = connection.execute(
            "SELECT count(*) FROM messages WHERE words @@ plainto_tsquery('simple', 'printed')"
        ).fetchone()
    assert delivered == (1,) and pairing == [(str(STRANGER),)] and found == (1,)
