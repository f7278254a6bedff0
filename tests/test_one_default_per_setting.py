"""One default per setting: the section models (the kernel's and every installed plugin's
``ConfigSectionSpec``) declare each setting's default, and no module of the kernel or of a
plugin writes that default again where it reads the setting from a raw mapping:
``section.get("enabled", True)`` or ``entry.get("transport") or "streamable_http"`` repeats
what the model says, and the two drift apart the day one changes.

A module that needs the default imports it from where the model takes it (a constant the
model's field is declared from, as ``hermes_kernel.config.defaults`` does), or reads the
typed section. A key that merely shares a setting's name (a job's own ``enabled`` in
jobs.json) is listed below with the reason.
"""

from __future__ import annotations

import ast
import types
import typing
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parents[1]
SOURCES = [REPO / "kernel" / "src", *sorted((REPO / "plugins").glob("*/src"))]

NOT_A_SETTING: dict[tuple[str, str], str] = {
    ("plugins/cron/src/hermes_plugin_cron/jobs.py", "enabled"): "a job's own flag in jobs.json",
    ("plugins/cron/src/hermes_plugin_cron/scheduler.py", "enabled"): "a job's own flag",
}
"""(module, key) -> why that key is not the setting of the same name."""


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The models an annotation holds: itself, or inside ``X | None``, ``dict[str, X]``..."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for argument in typing.get_args(annotation):
            yield from _models_in(argument)


def _defaults(
    model: type[BaseModel], where: str, found: dict[str, set[str]], seen: set[type]
) -> None:
    if model in seen:
        return
    seen.add(model)
    for name, field in model.model_fields.items():
        for inner in _models_in(field.annotation):
            _defaults(inner, f"{where}.{name}", found, seen)
        default = field.default
        if default is PydanticUndefined or isinstance(default, BaseModel):
            continue
        if isinstance(default, str | int | float | bool) and default not in ("", None):
            found.setdefault(name, set()).add(repr(default))
    root = model.model_fields.get("root")
    if root is not None:
        for inner in _models_in(root.annotation):
            _defaults(inner, where, found, seen)


def _declared() -> dict[str, set[str]]:
    """Setting name -> the defaults section models declare for a setting of that name."""
    from hermes_kernel.config.model import KernelConfig

    found: dict[str, set[str]] = {}
    seen: set[type] = set()
    _defaults(KernelConfig, "kernel", found, seen)
    for entry in entry_points(group="hermes.plugins"):
        plugin = entry.load()
        sections = getattr(plugin, "hermes_config_sections", None)
        for spec in sections() if sections is not None else ():
            _defaults(spec.model_class(), f"{entry.name}:{spec.name}", found, seen)
    return found


def _repeats(path: Path, declared: dict[str, set[str]]) -> Iterator[tuple[int, str, str]]:
    """(line, key, literal) for each ``.get(KEY, LITERAL)`` and ``.get(KEY) or LITERAL``
    whose literal is a default a section model declares for a setting named KEY."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        call, literal = None, None
        if isinstance(node, ast.Call) and len(node.args) == 2:
            call, literal = node, node.args[1]
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
            first, second = node.values
            if isinstance(first, ast.Call) and len(first.args) == 1:
                call, literal = first, second
        if call is None or not isinstance(literal, ast.Constant):
            continue
        if not (isinstance(call.func, ast.Attribute) and call.func.attr in {"get", "pop"}):
            continue
        key = call.args[0]
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        value = literal.value
        if isinstance(value, bool) is False and value in (None, "", 0):
            continue  # "nothing" is not a default worth naming
        if repr(value) in declared.get(key.value, ()) or (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and any(_same_number(value, text) for text in declared.get(key.value, ()))
        ):
            yield node.lineno, key.value, repr(value)


def _same_number(value: float, text: str) -> bool:
    try:
        return float(text) == float(value)
    except ValueError:
        return False


@pytest.fixture(scope="module")
def declared() -> dict[str, set[str]]:
    found = _declared()
    assert len(found) > 100, "the section models were not read"
    return found


def test_no_module_repeats_a_default_a_section_model_declares(declared):
    repeated = []
    for source in SOURCES:
        for path in source.rglob("*.py"):
            where = path.relative_to(REPO).as_posix()
            if where.endswith("hermes_kernel/config/model.py"):
                continue  # where the kernel's models are declared
            for line, key, literal in _repeats(path, declared):
                if (where, key) not in NOT_A_SETTING:
                    repeated.append(f"{where}:{line}: {key!r} defaults to {literal} again")
    assert not repeated, "defaults written twice (take them from the model):\n" + "\n".join(
        repeated
    )


def test_the_check_sees_a_repeat_where_one_is_written(tmp_path, declared):
    module = tmp_path / "reader.py"
    module.write_text(
        "def settings(raw):\n"
        "    a = raw.get('max_iterations', 90)\n"
        "    b = raw.get('mode') or 'manual'\n"
        "    c = raw.get('max_iterations', 7)\n"
        "    return a, b, c\n"
    )
    assert [key for _, key, _ in _repeats(module, declared)] == ["max_iterations", "mode"]
