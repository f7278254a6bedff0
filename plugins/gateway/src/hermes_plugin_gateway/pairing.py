"""DM pairing: how an unknown user is let in by the owner, without editing config.

An unknown user who writes to the bot in a private chat gets an 8-character code; the owner
runs ``hermes pairing approve PLATFORM CODE``. Codes expire after an hour; a user gets at
most one code per 10 minutes; at most 3 codes wait per platform; 5 failed approvals within
an hour lock approving on that platform for an hour (codes cannot be guessed by trying).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_sdk.archive import PairedUser
from hermes_sdk.storage import Store, open_store

__all__ = ["PairedUser", "PairingError", "PairingRequest", "Pairings", "admit"]

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread
CODE_LENGTH = 8
CODE_TTL = 3600.0
REQUEST_INTERVAL = 600.0
MAX_PENDING = 3
MAX_FAILURES = 5
LOCK_SECONDS = 3600.0


class PairingError(Exception):
    """An approval that cannot go through; the message says why (one line)."""


@dataclass(frozen=True)
class PairingRequest:
    platform: str
    code: str
    user_id: str
    user_name: str
    created_at: float
    expires_at: float


def normalize_code(code: str) -> str:
    return "".join(code.split()).upper().replace("-", "")


class Pairings:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._now = clock

    def is_paired(self, platform: str, user_id: str) -> bool:
        return bool(
            self._store.query_value(
                "SELECT 1 FROM gateway_paired WHERE platform = ? AND user_id = ?",
                (platform, user_id),
            )
        )

    def request(self, platform: str, user_id: str, user_name: str) -> str | None:
        """A new code for this user, or None: they asked less than 10 minutes ago, or 3
        codes already wait on this platform."""
        now = self._now()
        with self._store.write() as cursor:
            cursor.execute("DELETE FROM gateway_pairing WHERE expires_at <= ?", (now,))
            recent = cursor.execute(
                "SELECT 1 FROM gateway_pairing WHERE platform = ? AND user_id = ? "
                "AND created_at > ?",
                (platform, user_id, now - REQUEST_INTERVAL),
            ).fetchall()
            if recent:
                return None
            waiting = len(
                cursor.execute(
                    "SELECT 1 FROM gateway_pairing WHERE platform = ?", (platform,)
                ).fetchall()
            )
            if waiting >= MAX_PENDING:
                return None
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            cursor.execute(
                "DELETE FROM gateway_pairing WHERE platform = ? AND user_id = ?",
                (platform, user_id),
            )
            cursor.execute(
                "INSERT INTO gateway_pairing (platform, code, user_id, user_name, created_at, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (platform, code, user_id, user_name, now, now + CODE_TTL),
            )
        return code

    def locked_until(self, platform: str) -> float | None:
        now = self._now()
        rows = self._store.query(
            "SELECT at FROM gateway_pairing_failures WHERE platform = ? AND at > ? "
            "ORDER BY at DESC",
            (platform, now - LOCK_SECONDS),
        )
        if len(rows) < MAX_FAILURES:
            return None
        return float(rows[MAX_FAILURES - 1][0]) + LOCK_SECONDS

    def approve(self, platform: str, code: str) -> PairedUser:
        """Let the user who was given ``code`` in; raises PairingError."""
        now = self._now()
        locked = self.locked_until(platform)
        if locked is not None:
            minutes = max(1, round((locked - now) / 60))
            raise PairingError(
                f"approving on {platform} is locked for {minutes} more minutes after "
                f"{MAX_FAILURES} failed attempts"
            )
        wanted = normalize_code(code)
        with self._store.write() as cursor:
            rows = cursor.execute(
                "SELECT user_id, user_name FROM gateway_pairing WHERE platform = ? AND code = ? "
                "AND expires_at > ?",
                (platform, wanted, now),
            ).fetchall()
            if not rows:
                cursor.execute(
                    "INSERT INTO gateway_pairing_failures (platform, at) VALUES (?, ?)",
                    (platform, now),
                )
                cursor.execute(
                    "DELETE FROM gateway_pairing_failures WHERE at < ?", (now - LOCK_SECONDS,)
                )
            else:
                user_id, user_name = str(rows[0][0]), str(rows[0][1] or "")
                cursor.execute(
                    "DELETE FROM gateway_pairing WHERE platform = ? AND user_id = ?",
                    (platform, user_id),
                )
                cursor.execute(
                    "INSERT INTO gateway_paired (platform, user_id, user_name, approved_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (platform, user_id) DO UPDATE SET "
                    "user_name = excluded.user_name, approved_at = excluded.approved_at",
                    (platform, user_id, user_name, now),
                )
        if not rows:
            raise PairingError(
                f"no waiting request on {platform} has the code {wanted!r} (mistyped, or "
                "expired after an hour); see: hermes pairing list"
            )
        return PairedUser(platform, user_id, user_name, now)

    def pending(self) -> list[PairingRequest]:
        rows = self._store.query(
            "SELECT platform, code, user_id, user_name, created_at, expires_at "
            "FROM gateway_pairing WHERE expires_at > ? ORDER BY created_at",
            (self._now(),),
        )
        return [
            PairingRequest(str(p), str(c), str(u), str(n or ""), float(a), float(e))
            for p, c, u, n, a, e in rows
        ]

    def paired(self) -> list[PairedUser]:
        rows = self._store.query(
            "SELECT platform, user_id, user_name, approved_at FROM gateway_paired "
            "ORDER BY platform, approved_at"
        )
        return [PairedUser(str(p), str(u), str(n or ""), float(a)) for p, u, n, a in rows]

    def revoke(self, platform: str, user_id: str) -> bool:
        with self._store.write() as cursor:
            removed = cursor.execute(
                "DELETE FROM gateway_paired WHERE platform = ? AND user_id = ? RETURNING 1",
                (platform, user_id),
            ).fetchall()
        return bool(removed)

    def admit(self, users: Sequence[PairedUser]) -> list[PairedUser]:
        """Let these users in as approved (an import from another tool), in one
        transaction; those that were not paired before."""
        added: list[PairedUser] = []
        with self._store.write() as cursor:
            for user in users:
                rows = cursor.execute(
                    "INSERT INTO gateway_paired (platform, user_id, user_name, approved_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (platform, user_id) DO NOTHING RETURNING 1",
                    (user.platform, user.user_id, user.user_name, user.approved_at),
                ).fetchall()
                if rows:
                    added.append(user)
        return added


def admit(home: str | Path, users: Sequence[PairedUser]) -> list[PairedUser]:
    """``hermes_admit_chat_users``: :meth:`Pairings.admit` in the store of ``home``."""
    from hermes_plugin_gateway.schema import SCHEMA

    with open_store(home, SCHEMA) as store:
        return Pairings(store).admit(users)
