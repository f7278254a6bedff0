"""``hermes doctor``: the hermes-agent distribution, when a plugin pulled it in.

A hermes-agent plugin that lists ``hermes-agent`` among its requirements installs all of
hermes-agent beside Hermes, its own ``hermes`` command included, which may now answer for
ours. Say which distribution brought it, and how to undo that.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import metadata

from hermes_sdk import Finding, HealthContext

__all__ = ["findings"]

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pulled_in_by() -> list[str]:
    """The installed distributions that require hermes-agent."""
    found = []
    for dist in metadata.distributions():
        for requirement in dist.requires or []:
            if "extra ==" in requirement:
                continue  # an optional extra does not pull it in
            match = _NAME.match(requirement)
            if match and _normal(match.group(1)) == "hermes-agent":
                found.append(f"{dist.metadata['Name']} {dist.version}")
    return sorted(set(found))


def findings(context: HealthContext) -> Iterator[Finding]:
    try:
        version = metadata.version("hermes-agent")
    except metadata.PackageNotFoundError:
        return
    owners = pulled_in_by()
    by = f", pulled in by {', '.join(owners)}" if owners else ""
    yield Finding(
        level="warning",
        message=f"the hermes-agent distribution {version} is installed beside Hermes{by}; its own "
        "`hermes` command may answer instead of Hermes's",
        fix="pip uninstall hermes-agent (its plugins run on Hermes without it)"
        + (f", and ask the authors of {', '.join(owners)} to make it optional" if owners else ""),
    )
