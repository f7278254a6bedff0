"""Reading a config.yaml section with a pydantic model, the way the kernel reads its own:
a key the model does not know is ignored and named (with the key it most likely meant),
never a refusal to start; a wrong value is an error, one line per problem.

A plugin validates its section with :func:`section_settings`::

    settings = section_settings("cron", CronConfig, context.config.get("cron"))

pydantic is imported when a section is read, not when this module is.
"""

from __future__ import annotations

import copy
import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["closest", "drop_unknown", "fields_at", "section_settings"]

ModelT = TypeVar("ModelT", bound="BaseModel")
Location = tuple[str | int, ...]

_PASSES = 8
"""Validations at most while removing unknown keys: pydantic reports a level's unknown
keys together, but not those under a value it could not read yet."""


def drop_unknown(model: type[BaseModel], data: Any) -> tuple[Any, list[Location]]:
    """``data`` without the keys ``model`` forbids as unknown (a copy), and where they were."""
    from pydantic import ValidationError

    cleaned = copy.deepcopy(data) if data is not None else {}
    dropped: list[Location] = []
    for _ in range(_PASSES):
        try:
            model.model_validate(cleaned)
            break
        except ValidationError as exc:
            unknown = [tuple(e["loc"]) for e in exc.errors() if e["type"] == "extra_forbidden"]
            if not unknown:
                break
            for location in unknown:
                _remove(cleaned, location)
            dropped += unknown
    return cleaned, dropped


def _remove(data: Any, location: Location) -> None:
    node = data
    for part in location[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node.pop(location[-1], None)


def fields_at(model: type[BaseModel], location: Sequence[str | int]) -> list[str]:
    """The keys ``model`` knows at ``location`` (the place of a key, without the key)."""
    current: Any = model
    parts = list(location)
    while parts:
        part = parts.pop(0)
        if not _is_model(current):
            return []
        field = current.model_fields.get(part)
        if field is None:
            return []
        current = field.annotation
        # Containers: a list index or a dict key in the location names no field.
        while True:
            current = _unwrap_optional(current)
            origin = typing.get_origin(current)
            if origin in (list, tuple, set, frozenset, Sequence) and parts:
                parts.pop(0)
                current = typing.get_args(current)[0] if typing.get_args(current) else None
            elif origin in (dict, Mapping) and parts:
                parts.pop(0)
                args = typing.get_args(current)
                current = args[1] if len(args) == 2 else None
            else:
                break
    return sorted(current.model_fields) if _is_model(current) else []


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        models = [a for a in members if _is_model(a) or typing.get_origin(a) is not None]
        return models[0] if models else (members[0] if members else annotation)
    return annotation


def _is_model(candidate: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(candidate, type) and issubclass(candidate, BaseModel)


def closest(word: str, choices: Sequence[str]) -> str | None:
    """The choice ``word`` is most likely a typo of, if one is close enough."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    if found:
        return found[0]
    lowered = {choice.lower().replace("-", "_"): choice for choice in choices}
    return lowered.get(word.lower().replace("-", "_"))


def section_settings(name: str, model: type[ModelT], data: Mapping[str, Any] | None) -> ModelT:
    """``data`` (the section ``name`` of config.yaml) validated by ``model``, unknown keys
    left out (``hermes doctor`` and the kernel's start-up warning name them). Raises
    ValueError, one ``name.key: problem`` per line, if a value is wrong (``key: problem``
    with ``name`` empty: data that is not a section of its own)."""
    from pydantic import ValidationError

    cleaned, _ = drop_unknown(model, dict(data or {}))
    try:
        return model.model_validate(cleaned)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            key = ".".join(str(part) for part in (name, *error["loc"]) if part != "")
            lines.append(f"{key}: {error['msg']}")
        raise ValueError("; ".join(lines)) from None
