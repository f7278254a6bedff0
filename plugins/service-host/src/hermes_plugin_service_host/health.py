"""The service's part of ``hermes status``: whether the gateway of this home is installed as
a service, and how its service manager says it stands."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from hermes_plugin_service_host.manager import ServiceError
from hermes_plugin_service_host.plan import manager_for, service_slug
from hermes_sdk import HealthContext, StatusLine


def status_lines(context: HealthContext) -> Iterator[StatusLine]:
    try:
        manager = manager_for(service_slug(Path(context.home), Path.home()), os.environ)
    except ServiceError:
        return  # a system with no service manager install knows: nothing to say
    if not manager.path.exists():
        yield StatusLine(label="Gateway service", text="not installed (hermes gateway install)")
        return
    state = manager.state() or "state unknown: no service manager to ask"
    yield StatusLine(
        label="Gateway service",
        text=f"{manager.name} ({manager.kind}): {state}",
        details=(str(manager.path),),
    )
