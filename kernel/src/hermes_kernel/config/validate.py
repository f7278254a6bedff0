"""Validate a config.yaml section with a pydantic model; report problems with file and line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from hermes_kernel.config.yaml_source import KeyPath, YamlDocument

if TYPE_CHECKING:
    from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound="BaseModel")


def _describe(error: Any) -> str:
    message = str(error["msg"])
    # pydantic says "Input should be X"; users read "expected X" faster.
    if message.startswith("Input should be "):
        message = "expected " + message[len("Input should be ") :]
    if error["type"] == "missing":
        return "required key is missing"
    got = error.get("input")
    from hermes_kernel.redact import is_secret_key

    parts = [str(part) for part in error["loc"]]
    if any(is_secret_key(p) or p.endswith("_env") or p == "credential_pools" for p in parts):
        return message  # never echo what may be a secret (a key pasted for a variable name)
    if got is not None and not isinstance(got, dict | list):
        return f"{message} (got {got!r})"
    return message


def dotted(key_path: KeyPath) -> str:
    return ".".join(str(part) for part in key_path)


def validate_section(
    document: YamlDocument, prefix: KeyPath, model: type[ModelT], data: Any
) -> tuple[ModelT | None, list[str]]:
    """Validate ``data`` (found at ``prefix`` in ``document``) with ``model``.

    Returns the model instance, or None and one problem line per error.
    """
    from pydantic import ValidationError

    try:
        return model.model_validate({} if data is None else data), []
    except ValidationError as exc:
        located = []
        for error in exc.errors():
            key_path = (*prefix, *error["loc"])
            line = document.line_of(key_path)
            text = f"{document.where(key_path)}: {dotted(key_path)}: {_describe(error)}"
            located.append((line, text))
        return None, [text for _, text in sorted(located, key=lambda item: item[0])]


def unknown_keys(document: YamlDocument, prefix: KeyPath, instance: BaseModel) -> list[str]:
    """One warning per key the model kept as an extra (unknown) key."""
    extra = instance.model_extra or {}
    return [
        f"{document.where((*prefix, key))}: unknown key {dotted((*prefix, key))!r} is ignored; "
        "check its spelling"
        for key in sorted(extra)
    ]
