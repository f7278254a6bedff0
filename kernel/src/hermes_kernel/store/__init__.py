"""The state store: HERMES_HOME/state.db (SQLite through apsw) with sessions, messages,
full-text search and turn leases."""

from hermes_kernel.store.errors import LeaseHeldError, StoreBusyError, StoreError

__all__ = ["LeaseHeldError", "StoreBusyError", "StoreError"]
