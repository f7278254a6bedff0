"""``hermes_cli``, as hermes-agent plugins see it on Hermes: a package holding only the
served ``hermes_cli.config`` and ``hermes_cli.plugins``."""

from __future__ import annotations

__path__: list[str] = []  # a package, so ``hermes_cli.config`` is looked up beneath it
