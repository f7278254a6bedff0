"""The gateway's tables in the home's state store (:mod:`hermes_sdk.storage`).

Version 1 is what the kernel's own migration 5 made before the gateway was a plugin, so a
home from then keeps its routes, pairings and undelivered replies: every statement is
``IF NOT EXISTS``. Never edit a released migration: add one.
"""

from __future__ import annotations

from hermes_sdk.storage import StoreSchema

__all__ = ["SCHEMA"]

V1 = """
-- Routes: the session a chat (or one participant in a group) talks in now; /new points
-- the route at a fresh session, nothing else changes it.
CREATE TABLE IF NOT EXISTS gateway_routes (
    key TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    updated_at REAL NOT NULL
);
-- Inbox: each accepted message, stored before the platform is told it arrived, with the
-- progress of its turn, so a restart resumes an interrupted turn instead of dropping it.
CREATE TABLE IF NOT EXISTS gateway_inbox (
    id INTEGER PRIMARY KEY,
    route_key TEXT NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chat TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT,
    message_id TEXT NOT NULL,
    text TEXT NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('queued', 'running', 'resuming', 'done', 'dropped', 'failed')),
    session_id TEXT,
    received_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (platform, chat_id, message_id)
);
CREATE INDEX IF NOT EXISTS gateway_inbox_open ON gateway_inbox(state)
    WHERE state IN ('queued', 'running', 'resuming');
-- Outbox, the delivery ledger: a reply is an obligation before it is sent. 'attempting'
-- found after a crash means it may have gone out: it is sent again with a note saying so.
CREATE TABLE IF NOT EXISTS gateway_outbox (
    id INTEGER PRIMARY KEY,
    inbox_id INTEGER REFERENCES gateway_inbox(id) ON DELETE SET NULL,
    platform TEXT NOT NULL,
    chat TEXT NOT NULL,
    reply_to TEXT,
    preview_id TEXT,
    text TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'attempting', 'delivered', 'abandoned')),
    attempts INTEGER NOT NULL DEFAULT 0,
    maybe_sent INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS gateway_outbox_open ON gateway_outbox(state)
    WHERE state IN ('pending', 'attempting');
-- DM pairing: codes an unknown user was given, the users the owner let in, and failed
-- approvals (five in an hour lock approving for an hour).
CREATE TABLE IF NOT EXISTS gateway_pairing (
    platform TEXT NOT NULL,
    code TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (platform, code)
);
CREATE TABLE IF NOT EXISTS gateway_paired (
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT,
    approved_at REAL NOT NULL,
    PRIMARY KEY (platform, user_id)
);
CREATE TABLE IF NOT EXISTS gateway_pairing_failures (
    platform TEXT NOT NULL,
    at REAL NOT NULL
);
"""

V2 = """
-- Files: those a message came with (JSON list, hermes_sdk.media.Attachment.as_dict), kept
-- with it so a turn resumed after a restart still has them; and the one file an outbox
-- entry sends (a spoken reply), each file an obligation of its own.
ALTER TABLE gateway_inbox ADD COLUMN attachments TEXT;
ALTER TABLE gateway_outbox ADD COLUMN attachment TEXT;
"""

SCHEMA = StoreSchema(name="gateway", migrations=(V1, V2))
