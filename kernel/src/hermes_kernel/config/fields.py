"""A section's settings as a form shows them: each field of its owner's pydantic model
(nested models flattened into dotted keys), typed, described, with its default and the
value config.yaml gives it."""

from __future__ import annotations

import ast
import enum
import inspect
import itertools
import json
import textwrap
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticUndefined

from hermes_sdk.administration import ConfigField, FieldType

__all__ = ["plain", "section_fields"]

_MISSING = object()


def section_fields(name: str, model: type[Any], raw: Any) -> tuple[ConfigField, ...]:
    """The fields of section ``name`` typed by ``model``; ``raw`` is what config.yaml has
    under it (anything: a broken section shows its defaults)."""
    from pydantic import RootModel

    if isinstance(model, type) and issubclass(model, RootModel):  # a mapping of entries
        default = model.model_fields["root"].get_default(call_default_factory=True)
        if default is PydanticUndefined:
            default = None
        return (
            ConfigField(
                key=name,
                type="yaml",
                description=plain(model.__doc__ or ""),
                value=_text(default if raw is None else raw),
                default=_text(default),
                is_set=raw is not None,
            ),
        )
    return tuple(_fields(name, model, raw if isinstance(raw, Mapping) else {}))


def _fields(prefix: str, model: type[Any], raw: Mapping[str, Any]) -> list[ConfigField]:
    from pydantic import BaseModel

    notes = _docstrings(model)
    found: list[ConfigField] = []
    for field_name, info in model.model_fields.items():
        key = f"{prefix}.{info.alias or field_name}" if prefix else info.alias or field_name
        annotation = _unwrapped(info.annotation)
        given = raw.get(info.alias or field_name, _MISSING)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested = given if isinstance(given, Mapping) else {}
            found += _fields(key, annotation, nested)
            continue
        kind, choices = _kind(annotation)
        if kind == "bool" and _optional(info.annotation):
            # Unset means something of its own ("what the provider says"): a box could only
            # ever save true or false, so the choice keeps "not set" open.
            kind, choices = "choice", ("", "true", "false")
        default = info.get_default(call_default_factory=True)
        if default is PydanticUndefined:  # required: no default to show
            default = None
        found.append(
            ConfigField(
                key=key,
                type=kind,
                description=plain(info.description or notes.get(field_name, "")),
                value=_text(default if given is _MISSING else given),
                default=_text(default),
                is_set=given is not _MISSING,
                choices=choices,
            )
        )
    return found


def plain(text: str) -> str:
    """A docstring as one line of text (no reST literal marks)."""
    return " ".join(text.replace("``", "").split())


def _optional(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


def _unwrapped(annotation: Any) -> Any:
    """``X | None`` is X here (an empty field means "not set")."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        kept = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(kept) == 1:
            return _unwrapped(kept[0])
    if origin is typing.Annotated:
        return _unwrapped(typing.get_args(annotation)[0])
    return annotation


def _kind(annotation: Any) -> tuple[FieldType, tuple[str, ...]]:
    if annotation is bool:
        return "bool", ()
    if annotation is int:
        return "int", ()
    if annotation is float:
        return "float", ()
    if annotation is str:
        return "text", ()
    if typing.get_origin(annotation) is typing.Literal:
        return "choice", tuple(str(arg) for arg in typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "choice", tuple(str(member.value) for member in annotation)
    return "yaml", ()


def _text(value: Any) -> str:
    """A value as one types it: scalars plain, the rest as flow YAML (JSON is YAML)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, int | float | str):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


_DOCSTRINGS: dict[tuple[str, str], dict[str, str]] = {}


def _docstrings(model: type[Any]) -> dict[str, str]:
    """Attribute docstrings (the string under ``name: int = 0``), which the house's section
    models use for descriptions; pydantic keeps them only when asked per model. Read once
    per class by its name (a section whose model a function makes anew on each call is
    read once too); a class made inside a function has no findable source: none."""
    key = (model.__module__, model.__qualname__)
    known = _DOCSTRINGS.get(key)
    if known is None:
        known = _DOCSTRINGS[key] = {} if _made_at_run_time(model) else _read_docstrings(model)
    return known


def _made_at_run_time(klass: type[Any]) -> bool:
    return "<locals>" in klass.__qualname__ or klass.__module__.startswith("pydantic.")


def _read_docstrings(model: type[Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if klass is object or ("__pydantic_fields__" not in vars(klass) and klass is not model):
            continue
        if _made_at_run_time(klass):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        try:
            body = ast.parse(source).body
        except SyntaxError:
            continue
        if not body or not isinstance(body[0], ast.ClassDef):
            continue
        statements = body[0].body
        for statement, after in itertools.pairwise(statements):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                found[statement.target.id] = after.value.value
    return found
