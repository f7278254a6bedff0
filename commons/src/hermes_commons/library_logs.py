"""A platform's official SDK logs under its own logger name ("Lark", "dingtalk_stream"),
often with a handler of its own that prints to stdout. Hermes's log handlers sit on the
``hermes`` logger (which does not propagate), so such records would go to stderr only:
unredacted, and not in the log files. :func:`adopt` sends them through a ``hermes.*``
logger instead, at a level that keeps the SDK's chatter (and what it logs at INFO, such as
a connection URL with its ticket) out."""

from __future__ import annotations

import logging

__all__ = ["adopt"]


class _Forward(logging.Handler):
    def __init__(self, into: str) -> None:
        super().__init__()
        self.into = logging.getLogger(into)

    def emit(self, record: logging.LogRecord) -> None:
        self.into.handle(record)  # its filters and handlers, and its parents'


def adopt(library: str, into: str, level: int = logging.WARNING) -> None:
    """Send the records of the ``library`` logger at ``level`` and above through ``into``
    (a ``hermes.*`` logger), in place of the library's own handlers. Done again, nothing
    changes."""
    logger = logging.getLogger(library)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    forward = _Forward(into)
    # On the handler too: a child logger the library sets to INFO itself (its own
    # "library.client") propagates its records here past this logger's level.
    forward.setLevel(level)
    logger.addHandler(forward)
    logger.setLevel(level)
    logger.propagate = False
