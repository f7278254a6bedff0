"""State store errors: one line each, saying what happened and what to do."""

from __future__ import annotations

from hermes_sdk import storage


class StoreError(storage.StoreError):
    """state.db cannot be used as it is (wrong schema, not a database, unwritable); the
    SDK's StoreError, so a plugin's store reports it as such."""


class StoreBusyError(StoreError):
    """Another process held the write lock for longer than we are willing to wait."""


class WouldBlock(Exception):
    """A write asked not to wait found the database busy; nothing was written."""


class LeaseHeldError(StoreError):
    """Another live process is running a turn on this session."""

    def __init__(self, session_id: str, holder: str, expires_in: float) -> None:
        super().__init__(
            f"session {session_id} is busy: a turn is running in {holder} "
            f"(lease expires in {expires_in:.0f} s); wait for it or use another session"
        )
        self.session_id = session_id
        self.holder = holder
