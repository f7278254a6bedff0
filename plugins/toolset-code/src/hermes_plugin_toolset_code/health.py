"""What ``hermes doctor`` says about execute_code: the ``code:`` section, and the interpreter
a script gets when the backend is this machine. Nothing is run."""

from __future__ import annotations

import os
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
    plugins = context.config.get("plugins")
    isolated = plugins.get("isolated") if isinstance(plugins, dict) else None
    if isinstance(isolated, list) and "toolset-code" in isolated:
        yield Finding(
            level="error",
            message="code: toolset-code cannot run isolated: its scripts call the other tools "
            "of the agent's process",
            fix="remove toolset-code from plugins.isolated",
        )
    if context.secrets.get("HERMES_WRITE_SAFE_ROOT") or os.environ.get("HERMES_WRITE_SAFE_ROOT"):
        yield Finding(
            level="warning",
            message="code: HERMES_WRITE_SAFE_ROOT is set, so Hermes cannot write a script's "
            "answers to its folder in the temporary directory; execute_code fails",
            fix="unset HERMES_WRITE_SAFE_ROOT to use execute_code",
        )
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
