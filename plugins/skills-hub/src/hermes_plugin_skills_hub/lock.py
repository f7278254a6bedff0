"""``skills-hub/lock.json``: every skill the hub installed, with where it came from, the
content hash it was installed with, and its scan. ``skills-hub/audit.log`` says what was
done when, one line each. Writes are atomic, under a file lock (two installs at once)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock

__all__ = ["Lock"]

Entry = dict[str, Any]


class Lock:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "lock.json"

    def entries(self) -> dict[str, Entry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.path} cannot be read ({exc}); fix or remove it") from None
        installed = data.get("installed") if isinstance(data, dict) else None
        return (
            {k: v for k, v in installed.items() if isinstance(v, dict)}
            if isinstance(installed, dict)
            else {}
        )

    @contextlib.contextmanager
    def changing(self) -> Iterator[dict[str, Entry]]:
        with FileLock(self.folder / "lock.lock", timeout=30):
            entries = self.entries()
            yield entries
            atomic_write_text(
                self.path,
                json.dumps({"version": 1, "installed": entries}, indent=1, sort_keys=True),
            )

    def log(self, action: str, name: str, detail: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with (self.folder / "audit.log").open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {action} {name} {detail}\n")
