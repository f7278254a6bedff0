"""The state store: sessions, messages, full-text search and turn leases, in
HERMES_HOME/state.db (SQLite through apsw) or a shared PostgreSQL (``store.url``); see
:mod:`hermes_kernel.store.backend`."""

from hermes_kernel.store.errors import LeaseHeldError, StoreBusyError, StoreError

__all__ = ["LeaseHeldError", "StoreBusyError", "StoreError"]
