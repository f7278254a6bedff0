"""``HERMES_TRACE_PLUGINS=1``: print every hook call with its plugin and duration to stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

Tracer = Callable[[str, str, float], None]


def stderr_tracer(stream: TextIO | None = None) -> Tracer:
    def trace(hook: str, plugin: str, seconds: float) -> None:
        out = stream if stream is not None else sys.stderr
        print(f"hermes trace: {hook} plugin={plugin} {seconds * 1000:.2f} ms", file=out, flush=True)

    return trace


def tracing_enabled(environ: dict[str, str] | None = None) -> bool:
    import os

    value = (environ if environ is not None else os.environ).get("HERMES_TRACE_PLUGINS", "")
    return value.strip().lower() in {"1", "true", "yes"}
