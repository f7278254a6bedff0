"""Wrong secrets from one address are throttled, so a key or password cannot be guessed
at speed. Shared by every server that checks one (the web UI's login, the API server's
bearer keys)."""

from __future__ import annotations

import time

__all__ = ["LoginThrottle"]


class LoginThrottle:
    """Wrong keys from one address: after ``allowed`` within ``window_s``, that address is
    refused until the window has passed, so a key cannot be guessed at speed."""

    def __init__(self, allowed: int = 5, window_s: float = 60.0) -> None:
        self.allowed = allowed
        self.window_s = window_s
        self._failures: dict[str, list[float]] = {}

    def _recent(self, address: str) -> list[float]:
        now = time.monotonic()
        recent = [t for t in self._failures.get(address, []) if now - t < self.window_s]
        if recent:
            self._failures[address] = recent
        else:
            self._failures.pop(address, None)
        return recent

    def blocked(self, address: str) -> bool:
        return len(self._recent(address)) >= self.allowed

    def failed(self, address: str) -> None:
        self._recent(address)
        self._failures.setdefault(address, []).append(time.monotonic())
        if len(self._failures) > 10_000:  # a flood of addresses: forget the oldest
            oldest = min(self._failures, key=lambda a: self._failures[a][-1])
            del self._failures[oldest]

    def succeeded(self, address: str) -> None:
        self._failures.pop(address, None)
