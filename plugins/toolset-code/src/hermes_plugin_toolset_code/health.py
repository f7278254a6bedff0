"""What ``hermes doctor`` says about execute_code: the ``code:`` section, and the interpreter
a script gets when the backend is this machine. Nothing is run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

from pydantic import ValidationError

from hermes_plugin_toolset_code.settings import settings_from
from hermes_sdk import Finding, HealthContext


def findings(context: HealthContext) -> Iterator[Finding]:
    try:
        settings = settings_from(context.config)
    except (ValidationError, ValueError) as exc:
        problem = str(exc).splitlines()[0]
        yield Finding(level="error", message=f"code: {problem}", fix="fix config.yaml's code:")
        return
    agent = context.config.get("agent")
    backend = agent.get("backend", "local") if isinstance(agent, dict) else "local"
    if backend != "local":
        yield Finding(
            level="ok",
            message=f"code: scripts run with {settings.python} in the {backend} backend "
            "(not checked from here)",
        )
        return
    found = shutil.which(settings.python)
    if found is None:
        yield Finding(
            level="error",
            message=f"code: {settings.python} is not on PATH; execute_code cannot run scripts",
            fix="install Python 3, or set code.python",
        )
        return
    yield Finding(level="ok", message=f"code: scripts run with {found}")
