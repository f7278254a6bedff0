"""The hermes-agent modules plugins import, served only where no real one exists.

hermes-agent plugins import a few of its modules (``from hermes_constants import
get_hermes_home``, ``from agent.memory_provider import MemoryProvider``, ``from tools.registry
import tool_error``) and often fall back when the import fails; some guards feature-detect
and fail closed. So each module served here is complete for what it offers, and nothing is
served that a real installation provides (the real ``hermes-agent`` distribution wins).

Two kinds of name, two ways:
- ``hermes_constants`` and ``hermes_cli`` (with ``.config`` and ``.plugins``) name nothing but
  hermes-agent, so a finder at the *end* of ``sys.meta_path`` serves them: every real module
  is found first.
- ``agent.memory_provider`` and ``tools.registry`` live in packages with common names (many
  projects have an ``agent`` or ``tools``), so no ``agent`` or ``tools`` package is ever
  installed: the submodule alone is put in ``sys.modules``, which is what ``from
  agent.memory_provider import MemoryProvider`` reads. ``import agent`` still fails, as it
  should, and a real ``agent`` package, when there is one, is left alone.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
from types import ModuleType

__all__ = ["SERVED", "install"]

_HERE = __name__
SERVED: dict[str, str] = {
    "hermes_constants": f"{_HERE}.constants",
    "hermes_cli": f"{_HERE}.cli_package",
    "hermes_cli.config": f"{_HERE}.config",
    "hermes_cli.plugins": f"{_HERE}.plugins",
}
"""Names served by the finder, and the module of ours each one is."""

SUBMODULES: dict[str, str] = {
    "agent.memory_provider": f"{_HERE}.memory_provider",
    "tools.registry": f"{_HERE}.registry",
}
"""Submodules of common package names, placed in sys.modules alone (see above)."""

_lock = threading.Lock()


class _Served(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves :data:`SERVED` names; asked last, so only where nothing real answered."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in SERVED:
            return None
        parent = fullname.rpartition(".")[0]
        if parent:
            above = getattr(sys.modules.get(parent), "__spec__", None)
            if above is None or above.loader is not self:
                return None  # beneath a real hermes_cli: what it lacks, it lacks
        package = fullname == "hermes_cli"
        return importlib.util.spec_from_loader(fullname, self, is_package=package)

    def exec_module(self, module: ModuleType) -> None:
        """The served module is a fresh one holding our module's names (ours keeps its own
        name and spec; its functions still read its state)."""
        ours = importlib.import_module(SERVED[module.__name__])
        module.__dict__.update(
            {key: value for key, value in vars(ours).items() if not key.startswith("__")}
        )
        if module.__name__ == "hermes_cli":
            module.__path__ = []


_FINDER = _Served()


def _real(name: str) -> bool:
    """Whether an installed package ``name`` exists (or is imported). A folder of that name
    in the current directory does not count: a process started there with ``python -m``
    has it on sys.path by accident, not as an installed package."""
    if name in sys.modules:
        return True
    here = os.getcwd()
    installed = [entry for entry in sys.path if entry not in ("", here)]
    if importlib.machinery.PathFinder.find_spec(name, installed) is not None:
        return True
    try:  # an editable install answers through a finder of its own
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    places = [str(place) for place in spec.submodule_search_locations or [spec.origin or ""]]
    return not all(os.path.abspath(place).startswith(here + os.sep) for place in places)


def install() -> None:
    """Put the finder last on ``sys.meta_path`` and the lone submodules in ``sys.modules``,
    once; idempotent and thread-safe (plugins load side by side)."""
    with _lock:
        if _FINDER not in sys.meta_path:
            sys.meta_path.append(_FINDER)
        for name, ours in SUBMODULES.items():
            package = name.partition(".")[0]
            if name in sys.modules or _real(package):
                continue  # a real package of that name: its own submodule, or none
            sys.modules[name] = importlib.import_module(ours)
