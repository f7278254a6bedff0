"""The old names of modules that moved out of hermes-sdk (to hermes-commons, hermes-testkit,
or beside the plugin a fake is for): each still imports, as the very module it moved to,
with a DeprecationWarning, until hermes-sdk 0.3."""

from __future__ import annotations

import importlib
import sys
import warnings

REMOVED_IN = "hermes-sdk 0.3"


def moved(old: str, new: str, package: str = "hermes-commons") -> None:
    """Make ``old`` (being imported) the module ``new`` of ``package`` (monkeypatching either
    patches the one module), and warn whoever imported it."""
    warnings.warn(
        f"{old} moved to {new} (the {package} package): import it from there; "
        f"the old name goes in {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )
    sys.modules[old] = importlib.import_module(new)
