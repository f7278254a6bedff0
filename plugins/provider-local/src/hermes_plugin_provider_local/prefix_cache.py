"""The evaluated prompt of the embedded model, kept on disk between runs.

Every new process evaluates the same frozen prefix (system prompt and tool schemas, often
thousands of tokens) before it can answer: seconds on two cores. llama.cpp can save a slot's
evaluated state to a file and restore it; this keeps one such file per model and context size
in HERMES_HOME/cache/embedded/<model>/, restores it when the model is loaded, and llama.cpp
then evaluates only what comes after the shared prefix.

A state is saved after a completion that the restored state did not already cover (90% of
its prompt), written under a temporary name and renamed, so a reader never sees half a file.
The folder tree is kept under its size bound by dropping the least recently used files, and a
damaged or unreadable file is a miss (and is removed), never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Protocol

__all__ = ["PrefixCache", "cache_folder"]

MIN_PREFIX = 64
"""Shorter matches are not counted as hits (they cost more to load than they save)."""
COVERED = 0.9
STATE = "prefix.slot"


class Slots(Protocol):
    def save_slot(self, filename: str) -> bool: ...
    def restore_slot(self, filename: str) -> int: ...


def cache_folder(home: Path, model_path: Path, n_ctx: int) -> Path:
    """One folder per model file (its path, size and time) and context size."""
    stat = model_path.stat()
    key = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}"
    return home / "cache" / "embedded" / hashlib.sha256(key.encode()).hexdigest()[:16]


class PrefixCache:
    def __init__(self, folder: Path, capacity_bytes: int) -> None:
        self.folder = folder
        self.capacity_bytes = capacity_bytes
        self.restored = 0
        """Tokens the stored state put back when the model was loaded."""
        self.hits = 0
        self.stored = 0

    def restore(self, slots: Slots) -> None:
        """Put the stored state into the model's slot, if there is a usable one."""
        state = self.folder / STATE
        if not state.is_file():
            return
        self.restored = slots.restore_slot(STATE)
        if self.restored == 0:
            state.unlink(missing_ok=True)  # damaged, or from another llama.cpp: a miss
            return
        now = time.time()
        with contextlib.suppress(OSError):
            os.utime(state, (now, now))  # recently used: evicted last

    def after(self, slots: Slots, reused: int, evaluated: int) -> None:
        """After a completion that reused ``reused`` tokens and evaluated ``evaluated``."""
        if self.restored and reused >= MIN_PREFIX:
            self.hits += 1
        self.restored = 0  # only the first completion after loading can count as a hit
        if reused >= COVERED * (reused + evaluated):
            return  # the stored (or in-memory) state already holds nearly all of it
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        partial = f".{STATE}.{os.getpid()}"
        if not slots.save_slot(partial):
            (self.folder / partial).unlink(missing_ok=True)
            return  # a full disk costs the next run its head start, nothing else
        try:
            os.replace(self.folder / partial, self.folder / STATE)
        except OSError:
            return
        self.stored += 1
        self._trim()

    def _trim(self) -> None:
        """Drop the least recently used states until all of them fit the bound."""
        root = self.folder.parent
        try:
            states = sorted(root.glob(f"*/{STATE}"), key=lambda p: p.stat().st_mtime)
            sizes = {p: p.stat().st_size for p in states}
        except OSError:
            return
        total = sum(sizes.values())
        while states and total > self.capacity_bytes:
            oldest = states.pop(0)
            oldest.unlink(missing_ok=True)
            total -= sizes[oldest]
