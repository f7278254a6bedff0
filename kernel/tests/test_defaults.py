"""One default per setting: the section models declare the kernel's shared defaults from
``hermes_kernel.config.defaults``, and no kernel module writes one of those values again
where it reads that setting (``.get("max_iterations", 90)``) or declares a field for it
(``max_iterations: int = 90``)."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_kernel.config import defaults
from hermes_kernel.config.model import KernelConfig

KERNEL = Path(__file__).resolve().parents[1] / "src" / "hermes_kernel"
SHARED = {
    name: value
    for name, value in vars(defaults).items()
    if name.isupper() and not name.startswith("_")
}


def _field(constant: str) -> tuple[str, object]:
    """``AGENT_MAX_ITERATIONS`` -> the model's ``agent.max_iterations`` default."""
    for section, info in KernelConfig.model_fields.items():
        prefix = section.upper() + "_"
        if constant.startswith(prefix):
            key = constant.removeprefix(prefix).lower()
            model = info.annotation
            field = model.model_fields[key]  # type: ignore[union-attr]
            return key, field.default
    raise AssertionError(f"{constant} names no kernel section")


def _literals(value: object) -> str:
    if isinstance(value, str):
        return rf"""(?:"{re.escape(value)}"|'{re.escape(value)}')"""
    if isinstance(value, float) and value.is_integer():
        return rf"(?:{int(value)}(?:\.0)?)(?![\d.])"
    return rf"{re.escape(repr(value))}(?![\d.])"


def test_each_shared_default_is_its_section_models_default():
    assert SHARED, "hermes_kernel.config.defaults declares nothing"
    for constant, value in SHARED.items():
        key, declared = _field(constant)
        assert declared == value, f"{constant}: the model declares {key}={declared!r}"


def test_no_kernel_module_repeats_a_shared_default():
    found = []
    for constant, value in SHARED.items():
        key, _ = _field(constant)
        literal = _literals(value)
        patterns = [
            re.compile(rf"""get\(\s*["']{key}["']\s*,\s*{literal}"""),
            re.compile(rf"\b{key}\s*:\s*[^=\n]+=\s*{literal}"),
        ]
        for path in KERNEL.rglob("*.py"):
            if path.parent.name == "config" and path.name in ("defaults.py", "model.py"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if any(pattern.search(line) for pattern in patterns):
                    found.append(f"{path.relative_to(KERNEL)}:{number}: {line.strip()}")
    assert found == [], "use hermes_kernel.config.defaults instead:\n" + "\n".join(found)
