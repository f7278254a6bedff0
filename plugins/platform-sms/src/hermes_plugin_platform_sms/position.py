"""Where reading Twilio's message log stands (``platforms/sms/read.json``): the instant up to
which every text is known to be handed over, and the ids of the texts handed over lately
(so a read-back, which reads a margin before that instant, hands none over twice and fetches
no picture again, across restarts too).

The instant moves only when nothing is unsure: no hand-over in flight, none failed since the
last complete read-back, no read-back running. A text that arrives meanwhile is read back."""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from datetime import datetime
from pathlib import Path

from hermes_commons.files import atomic_write_text

__all__ = ["Position"]

log = logging.getLogger("hermes.sms")

KEPT_IDS = 2000


class Position:
    def __init__(self, home: str) -> None:
        self.path = Path(home) / "platforms" / "sms" / "read.json"
        self.since: datetime | None = None
        self._handed: OrderedDict[str, None] = OrderedDict()
        self.in_flight = 0
        self.unsure = False
        """A hand-over failed, or a read-back is due or running: the instant stays put."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.since = datetime.fromisoformat(str(data["since"]))
            self._handed = OrderedDict.fromkeys(str(i) for i in data.get("handed") or ())
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("sms: %s is unreadable (%s); reading back from now on", self.path, exc)

    def handed(self, sid: str) -> bool:
        return sid in self._handed

    def took(self, sid: str) -> None:
        """``sid`` is handed over (or answered: a keyword, a typed choice)."""
        self._handed[sid] = None
        self._handed.move_to_end(sid)
        while len(self._handed) > KEPT_IDS:
            self._handed.popitem(last=False)

    def stand(self, at: datetime, *, force: bool = False) -> None:
        """Everything up to ``at`` is in (unless something is unsure; ``force``: a read-back
        that read everything up to ``at``)."""
        if not force and (self.unsure or self.in_flight):
            return
        self.since = at
        try:
            text = json.dumps({"since": at.isoformat(), "handed": list(self._handed)})
            atomic_write_text(self.path, text, sync=False)
        except OSError as exc:
            log.warning("sms: cannot write %s: %s", self.path, exc)
