"""Where a home's state store is, as config.yaml and .env say: in HERMES_HOME (the engine that
keeps it there decides how) unless ``store.url`` names a database elsewhere, whose password,
if any, is in .env as ``HERMES_STORE_PASSWORD``. Opening it is
:mod:`hermes_kernel.plugins.store_engines`'s."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_kernel.config.defaults import STORE_POOL_SIZE

PASSWORD_VARIABLE = "HERMES_STORE_PASSWORD"


@dataclass(frozen=True)
class StoreLocation:
    url: str | None = None
    """None: in the home."""
    password: str | None = None
    pool_size: int = STORE_POOL_SIZE


def store_location(home: Path, config: Mapping[str, Any] | None = None) -> StoreLocation:
    """What the home's config.yaml (``config``, when the caller has read it already) and .env
    say."""
    from hermes_kernel.config.settings import load_document

    if config is None:
        config = load_document(home).data
    section: Any = config.get("store") or {}
    url = section.get("url") if isinstance(section, dict) else None
    if not url:
        return StoreLocation()
    return StoreLocation(
        str(url), store_password(home), int(section.get("pool_size") or STORE_POOL_SIZE)
    )


def store_password(home: Path) -> str | None:
    """``HERMES_STORE_PASSWORD`` from the environment or the home's .env (None: none)."""
    from hermes_commons.dotenv import read_dotenv
    from hermes_kernel.config.settings import dotenv_path

    password = os.environ.get(PASSWORD_VARIABLE) or read_dotenv(dotenv_path(home)).get(
        PASSWORD_VARIABLE
    )
    return password or None
