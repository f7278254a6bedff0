"""The words carriers require a texting service to honour, as Twilio's Advanced Opt-Out
applies them: a text that is only one word (any case), STOP (or STOPALL, UNSUBSCRIBE,
CANCEL, END, QUIT, REVOKE, OPTOUT), stops every message to that number until it texts
START (or YES, UNSTOP); HELP (or INFO) is answered with who writes and how to stop. Twilio
itself confirms a STOP and, by default, answers HELP. Who stopped is kept in
``platforms/sms/optouts.json``.

Matched as Twilio matches them (the word alone, without punctuation), so Hermes never goes
silent on someone Twilio still writes to."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Literal

from hermes_commons.files import atomic_write_text
from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["OptOuts", "keyword"]

log = logging.getLogger("hermes.sms")

STOP = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"})
START = frozenset({"START", "YES", "UNSTOP"})
HELP = frozenset({"HELP", "INFO"})


def keyword(text: str) -> Literal["stop", "start", "help"] | None:
    """The keyword a text is, if it is one word alone."""
    word = text.strip().upper()
    if word in STOP:
        return "stop"
    if word in START:
        return "start"
    if word in HELP:
        return "help"
    return None


class OptOuts:
    def __init__(self, home: str) -> None:
        self.path = Path(home) / "platforms" / "sms" / "optouts.json"
        try:
            self._numbers = {str(n) for n in json.loads(self.path.read_text(encoding="utf-8"))}
        except FileNotFoundError:
            self._numbers = set()
        except (OSError, ValueError, TypeError) as exc:
            # Unreadable: nobody is taken for opted in by mistake.
            raise PlatformNotConfigured(
                f"{self.path} is unreadable ({type(exc).__name__}): fix it (a JSON list of "
                "numbers that texted STOP) or move it aside"
            ) from None

    def __contains__(self, number: str) -> bool:
        return number in self._numbers

    def stopped(self, number: str) -> None:
        if number not in self._numbers:
            self._numbers.add(number)
            self._save()

    def started(self, number: str) -> None:
        if number in self._numbers:
            self._numbers.discard(number)
            self._save()

    def _save(self) -> None:
        atomic_write_text(self.path, json.dumps(sorted(self._numbers)))
