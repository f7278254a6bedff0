"""Logging for the hermes command: one line per message on stderr, and the same records in
HERMES_HOME/logs (``agent.log`` or a long-running front-end's own, and ``errors.log`` for
warnings and worse), rotated by size; secrets are redacted on every way out."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from hermes_commons.redact import redact_text
from hermes_commons.text import printable


class RedactingFilter(logging.Filter):
    """Redact secrets from the final message text (arguments included)."""

    def __init__(self, secret_values: Iterable[str] = ()) -> None:
        super().__init__()
        self.secret_values = list(secret_values)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):  # a stranger's text (a name, a path) forges no line
            record.args = tuple(_escaped(a) if isinstance(a, str) else a for a in record.args)
        message = redact_text(record.getMessage(), self.secret_values)
        record.msg, record.args = message, None
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text, self.secret_values)
        return True


def _escaped(text: str) -> str:
    """An argument of a log line as one line: newlines and other control characters shown,
    never acted on (a new line forged into the log, an escape code in the owner's terminal)."""
    return printable(text.replace("\r", "\\r").replace("\n", "\\n"))


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"hermes: {record.levelname.lower()}: {super().format(record)}"


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes each record to ``sys.stderr`` as it is then, not as it was at start: the chat
    replaces it while its prompt is drawn, so a record is printed above the prompt instead
    of through it (which left the prompt's old lines frozen on the screen)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr  # under the handler's lock: handle() holds it
        super().emit(record)


def setup_logging(verbose: bool) -> RedactingFilter:
    """Send the ``hermes`` loggers to stderr; return the filter so secrets can be added.

    With ``HERMES_LOG_STDERR=0`` (and no ``-v``) the records are not repeated on stderr
    while a log file takes them: for a process whose stderr a service manager keeps in a
    file of its own, which then holds only what is not a record (a start-up error, a
    crash's traceback)."""
    logger = logging.getLogger("hermes")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        if not isinstance(handler, logging.StreamHandler):
            handler.close()  # an earlier run's log file (in one process: the tests)
    handler = _CurrentStderr()
    handler.setFormatter(_Formatter("%(message)s"))
    handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    if not verbose:  # what the agent did is for the log files; the screen shows it already
        handler.addFilter(lambda record: not record.name.startswith(ACTIVITY))
    if not verbose and os.environ.get(QUIET_STDERR, "").strip().lower() in ("0", "no", "off"):
        handler.addFilter(lambda record: not _files_take_records(logger))
    redactor = RedactingFilter()
    handler.addFilter(redactor)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    return redactor


ACTIVITY = "hermes.activity"
"""The logger of what the agent did (turns, model calls, tool calls): files only, unless -v."""

QUIET_STDERR = "HERMES_LOG_STDERR"
"""``HERMES_LOG_STDERR=0``: records go to the log files only (see :func:`setup_logging`)."""

LOG_NAMES = ("agent", "errors")
"""The logs the kernel writes in HERMES_HOME/logs; a long-running front-end moves the main
one to a name of its own (``CommandContext.log_to``), and ``hermes logs NAME`` reads any."""
MAX_BYTES = 5 * 1024 * 1024
"""A log is rotated at this size; ``BACKUPS`` older copies are kept (``agent.log.1`` ...)."""
BACKUPS = 3
LINE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _LazyRotatingFile(logging.Handler):
    """A size-rotated log file that is opened (and ``logging.handlers`` imported) only when
    the first record arrives: a one-shot that logs nothing never touches the disk."""

    def __init__(self, path: Path, level: int) -> None:
        super().__init__(level)
        self.path = path
        self._file: logging.Handler | None = None
        self.unwritable = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.unwritable:
            return
        if self._file is None:
            from logging.handlers import RotatingFileHandler

            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = RotatingFileHandler(
                    self.path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
                )
            except OSError as exc:
                # A read-only home: said once, in one line; the terminal still gets it all.
                self.unwritable = True
                print(f"hermes: warning: cannot write {self.path}: {exc.strerror}", file=sys.stderr)
                return
            self._file.setFormatter(logging.Formatter(LINE_FORMAT))
        self._file.handle(record)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        super().close()


def _files_take_records(logger: logging.Logger) -> bool:
    return any(
        isinstance(handler, _LazyRotatingFile) and not handler.unwritable
        for handler in logger.handlers
    )


def log_to_files(
    home: Path, redactor: RedactingFilter, main: str = "agent", level: str | int = logging.INFO
) -> None:
    """Also write the ``hermes`` records to HERMES_HOME/logs/MAIN.log (``level`` and up,
    ``logging.level``) and errors.log (warnings and up). Called again with another ``main``
    (a long-running front-end's own), it moves the main log there."""
    logger = logging.getLogger("hermes")
    for handler in list(logger.handlers):
        if isinstance(handler, _LazyRotatingFile):
            logger.removeHandler(handler)
            handler.close()
    folder = home / "logs"
    named = logging.getLevelName(level) if isinstance(level, str) else level
    main_level = named if isinstance(named, int) else logging.INFO
    if main_level < logger.level or logger.level == logging.NOTSET:
        logger.setLevel(main_level)  # DEBUG in the file even when the terminal shows INFO
    for name, level_number in ((main, main_level), ("errors", logging.WARNING)):
        handler = _LazyRotatingFile(folder / f"{name}.log", level_number)
        handler.addFilter(redactor)
        logger.addHandler(handler)
