"""An SDK's logger adopted: its records reach the hermes logger's handlers (and filters),
its own stdout handler is gone, and what it logs below the level is dropped."""

from __future__ import annotations

import logging

from hermes_commons.library_logs import adopt


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_an_sdks_records_go_through_hermes() -> None:
    library = logging.getLogger("some_sdk_under_test")
    library.addHandler(logging.StreamHandler())
    hermes = logging.getLogger("hermes.test_adopted")
    kept = _Kept()
    hermes.addHandler(kept)
    hermes.propagate = False
    try:
        adopt("some_sdk_under_test", "hermes.test_adopted")
        adopt("some_sdk_under_test", "hermes.test_adopted")  # again: still one handler
        library.info("connected to wss://example?ticket=secret")
        library.warning("reconnecting")
        child = logging.getLogger("some_sdk_under_test.client")
        child.setLevel(logging.INFO)  # as an SDK sets its own loggers
        child.info("endpoint is {'ticket': 'secret'}")
        child.error("open connection failed")
        messages = [r.getMessage() for r in kept.records]
        assert messages == ["reconnecting", "open connection failed"]
        assert len(library.handlers) == 1 and not library.propagate
    finally:
        hermes.removeHandler(kept)
