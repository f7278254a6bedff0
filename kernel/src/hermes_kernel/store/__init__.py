"""The state store: sessions, messages, full-text search and turn leases, in a database a
store engine plugin keeps (in the home, or where ``store.url`` says); see
:mod:`hermes_kernel.store.backend`."""

from hermes_kernel.store.errors import LeaseHeldError, StoreBusyError, StoreError

__all__ = ["LeaseHeldError", "StoreBusyError", "StoreError"]
