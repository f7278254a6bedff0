"""What the Matrix platform keeps in HERMES_HOME/platforms/matrix: the device a password
login made (its token, so a restart does not make a new device each time) and the sync
position, saved only once every event before it is stored by the gateway, so a restart
neither replays nor loses a message."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text

__all__ = ["MatrixState"]


class MatrixState:
    def __init__(self, home: str) -> None:
        self.folder = Path(home) / "platforms" / "matrix"

    def _read(self, name: str) -> dict[str, Any]:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads((self.folder / name).read_text())
            if isinstance(data, dict):
                return data
        return {}

    def device(self, homeserver: str, user_id: str) -> dict[str, str] | None:
        """The saved login of ``user_id`` on ``homeserver``, if any."""
        data = self._read("device.json")
        same = data.get("homeserver") == homeserver and data.get("user_id") == user_id
        if same and data.get("access_token") and data.get("device_id"):
            return {
                "access_token": str(data["access_token"]),
                "device_id": str(data["device_id"]),
            }
        return None

    def save_device(self, homeserver: str, user_id: str, device_id: str, token: str) -> None:
        record = {
            "homeserver": homeserver,
            "user_id": user_id,
            "device_id": device_id,
            "access_token": token,
        }
        atomic_write_text(self.folder / "device.json", json.dumps(record), mode=0o600)

    def forget_device(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.folder / "device.json").unlink()

    def since(self, homeserver: str, user_id: str) -> str | None:
        data = self._read("sync.json")
        if data.get("homeserver") == homeserver and data.get("user_id") == user_id:
            token = data.get("next_batch")
            return str(token) if token else None
        return None

    def save_since(self, homeserver: str, user_id: str, token: str) -> None:
        record = {"homeserver": homeserver, "user_id": user_id, "next_batch": token}
        atomic_write_text(self.folder / "sync.json", json.dumps(record), mode=0o600)
