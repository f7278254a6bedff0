"""The evaluated prompt of the embedded model, kept on disk between runs.

Every new process evaluates the same frozen prefix (system prompt and tool schemas, a few
thousand tokens) before it can answer: seconds on two cores. llama-cpp-python asks a cache
for the state of the longest evaluated prefix of each prompt and offers the state after each
completion; this one keeps those states in HERMES_HOME/cache/embedded/<model>/, so the
second run of a one-shot starts from the stored prefix and evaluates only what is new.

Each entry is two files, ``KEY.tokens`` (the token ids, int32) and ``KEY.state`` (llama.cpp's
context state); there is no index to get out of step when two processes write at once. Only
what the context state needs is stored (the per-token scores are not: a prompt always goes on
past the stored prefix, so they are computed again). A state is stored only when no entry
already covers 90% of its tokens, the folder is kept under its size bound by dropping the
least recently used entries, and a damaged entry is a miss (and is removed), never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Any

from llama_cpp.llama import Llama, LlamaState
from llama_cpp.llama_cache import BaseLlamaCache

from hermes_sdk.files import atomic_write_bytes

__all__ = ["PrefixCache", "cache_folder"]

MIN_PREFIX = 64
"""Shorter matches are not worth a state load (they cost more than they save)."""
COVERED = 0.9


def cache_folder(home: Path, model_path: Path, n_ctx: int) -> Path:
    """One folder per model file (its path, size and time) and context size."""
    stat = model_path.stat()
    key = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}"
    return home / "cache" / "embedded" / hashlib.sha256(key.encode()).hexdigest()[:16]


class PrefixCache(BaseLlamaCache):
    def __init__(self, folder: Path, n_ctx: int, n_vocab: int, capacity_bytes: int) -> None:
        super().__init__(capacity_bytes)
        self.folder = folder
        self.n_ctx = n_ctx
        self.n_vocab = n_vocab
        self.hits = 0
        self.stored = 0

    # --- what llama-cpp-python calls ---------------------------------------------------

    @property
    def cache_size(self) -> int:
        return sum(
            path.stat().st_size for kind in ("tokens", "state") for path in self._files(kind)
        )

    def __contains__(self, key: Any) -> bool:
        return self._best(tuple(key))[0] is not None

    def __getitem__(self, key: Any) -> LlamaState:
        import numpy as np

        entry, tokens, _ = self._best(tuple(key))
        if entry is None:
            raise KeyError("no stored prefix")
        try:
            raw = (entry.with_suffix(".state")).read_bytes()
        except OSError:
            self._drop(entry)
            raise KeyError("the stored prefix is gone") from None
        now = time.time()
        with contextlib.suppress(OSError):
            os.utime(entry, (now, now))  # recently used: evicted last
        self.hits += 1
        ids = np.zeros(self.n_ctx, dtype=np.intc)  # the whole context, as Llama keeps it
        ids[: len(tokens)] = tokens
        return LlamaState(
            input_ids=ids,
            scores=np.zeros((1, self.n_vocab), dtype=np.single),  # recomputed: see above
            n_tokens=len(tokens),
            llama_state=raw,
            llama_state_size=len(raw),
            seed=0,
        )

    def __setitem__(self, key: Any, value: LlamaState) -> None:
        import numpy as np

        tokens = tuple(int(t) for t in key)[: value.n_tokens]
        best, _, shared = self._best(tokens)
        if best is not None and shared >= COVERED * len(tokens):
            return  # an entry already holds (nearly) all of it
        name = hashlib.sha256(np.asarray(tokens, dtype=np.int32).tobytes()).hexdigest()[:24]
        entry = self.folder / f"{name}.tokens"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # A cache: never half a file, but no wait for the disk (a state is megabytes).
            atomic_write_bytes(entry.with_suffix(".state"), bytes(value.llama_state), sync=False)
            atomic_write_bytes(entry, np.asarray(tokens, dtype=np.int32).tobytes(), sync=False)
        except OSError:
            return  # a full disk costs the next run its head start, nothing else
        self.stored += 1
        self._trim()

    # --- the folder ----------------------------------------------------------------------

    def _files(self, suffix: str) -> list[Path]:
        try:
            return [
                p
                for p in self.folder.glob(f"*.{suffix}")
                if p.is_file() and not p.name.startswith(".")  # not a write under way
            ]
        except OSError:
            return []

    def _best(self, key: tuple[int, ...]) -> tuple[Path | None, tuple[int, ...], int]:
        """The entry sharing the longest prefix with ``key``: its file, all its tokens (what
        its state holds: llama-cpp-python drops what does not match) and the shared length."""
        import numpy as np

        best: Path | None = None
        best_tokens: tuple[int, ...] = ()
        best_length = MIN_PREFIX - 1
        for entry in self._files("tokens"):
            try:
                tokens = tuple(int(t) for t in np.frombuffer(entry.read_bytes(), dtype=np.int32))
            except (OSError, ValueError):
                self._drop(entry)
                continue
            length = Llama.longest_token_prefix(tokens, key)
            if length > best_length:
                best, best_tokens, best_length = entry, tokens, length
        return best, best_tokens, max(best_length, 0) if best is not None else 0

    def _drop(self, entry: Path) -> None:
        for path in (entry, entry.with_suffix(".state")):
            path.unlink(missing_ok=True)

    def _trim(self) -> None:
        entries = sorted(self._files("tokens"), key=lambda p: p.stat().st_mtime)
        while entries and self.cache_size > self.capacity_bytes:
            self._drop(entries.pop(0))
