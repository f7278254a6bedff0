"""State store errors: one line each, saying what happened and what to do. The engines raise
the SDK's (:mod:`hermes_sdk.storage`); the kernel adds what is its own."""

from __future__ import annotations

from hermes_sdk.storage import ForeignStoreError, StoreBusyError, StoreError
from hermes_sdk.store_engine import WouldBlock

__all__ = ["ForeignStoreError", "LeaseHeldError", "StoreBusyError", "StoreError", "WouldBlock"]


class LeaseHeldError(StoreError):
    """Another live process is running a turn on this session."""

    def __init__(self, session_id: str, holder: str, expires_in: float) -> None:
        super().__init__(
            f"session {session_id} is busy: a turn is running in {holder} "
            f"(lease expires in {expires_in:.0f} s); wait for it or use another session"
        )
        self.session_id = session_id
        self.holder = holder
