"""Validate a config.yaml section with a pydantic model; report problems with file and line."""

from __future__ import annotations

from dataclasses import dataclass
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
    from hermes_commons.redact import is_secret_key

    parts = [str(part) for part in error["loc"]]
    if any(is_secret_key(p) or p.endswith("_env") or p == "credential_pools" for p in parts):
        return message  # never echo what may be a secret (a key pasted for a variable name)
    if isinstance(got, str) and _holds_a_password(got):
        return message  # a URL with a password in it: the message says to move it out
    if got is not None and not isinstance(got, dict | list):
        return f"{message} (got {got!r})"
    return message


def _holds_a_password(text: str) -> bool:
    """A URL with a password in it (``scheme://u:pw@host/db``, ``...?password=pw``)."""
    from urllib.parse import parse_qs, urlsplit

    if "://" not in text:
        return False
    try:
        parts = urlsplit(text)
        return parts.password is not None or "password" in parse_qs(parts.query)
    except ValueError:
        return True  # not a URL we can read: do not echo it either


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


@dataclass(frozen=True)
class UnknownKey:
    """A key of config.yaml that nothing here knows: ignored, and named once."""

    key_path: KeyPath
    line: int
    meant: str | None = None
    """The known key it is most likely a typo of."""

    def short(self) -> str:
        where = f"line {self.line}" if self.line else ""
        guess = f"did you mean {self.meant!r}?" if self.meant else ""
        detail = "; ".join(part for part in (where, guess) if part)
        return f"{dotted(self.key_path)}" + (f" ({detail})" if detail else "")

    def finding(self, document: YamlDocument) -> str:
        return f"{document.where(self.key_path)}: unknown key {dotted(self.key_path)!r} is ignored"

    def fix(self) -> str:
        if self.meant:
            return f"rename it to {self.meant!r} if that is what you meant, or remove it"
        return "remove it, or check its spelling against: hermes config show"


def lenient_section(
    document: YamlDocument, prefix: KeyPath, model: type[ModelT], data: Any
) -> tuple[ModelT | None, list[str], list[UnknownKey], Any]:
    """:func:`validate_section` that ignores unknown keys instead of refusing them: returns
    the instance (None if a value is wrong), the problems, the unknown keys (with the key
    each most likely meant), and ``data`` without them."""
    from hermes_commons.sections import closest, drop_unknown, fields_at

    cleaned, dropped = drop_unknown(model, data)
    instance, problems = validate_section(document, prefix, model, cleaned)
    unknown = [
        UnknownKey(
            (*prefix, *location),
            document.line_of((*prefix, *location)),
            closest(str(location[-1]), fields_at(model, location[:-1])),
        )
        for location in dropped
    ]
    if instance is not None:
        unknown += extra_keys(document, prefix, instance)
    return instance, problems, sorted(unknown, key=lambda key: key.line), cleaned


def extra_keys(document: YamlDocument, prefix: KeyPath, instance: BaseModel) -> list[UnknownKey]:
    """Keys a model that allows extras kept as such (``model:``, ``plugins:``, a provider):
    nothing reads them, so they are unknown too."""
    from hermes_commons.sections import closest

    found = []
    for path, model in _allowing_extras(prefix, instance):
        known = sorted(type(model).model_fields)
        extra = model.model_extra or {}
        for key in sorted(extra):
            if path == ("plugins",) and isinstance(extra[key], dict):
                continue  # plugins.NAME: {...} is that plugin's own (a foreign one reads it)
            found.append(
                UnknownKey((*path, key), document.line_of((*path, key)), closest(key, known))
            )
    return found


def _allowing_extras(prefix: KeyPath, instance: BaseModel) -> list[tuple[KeyPath, BaseModel]]:
    """The validated sections whose extra keys mean nothing (platform sections' extras are
    their plugin's options, and the top level's are plugin sections)."""
    if prefix:
        return [(prefix, instance)]
    found: list[tuple[KeyPath, BaseModel]] = []
    for name in ("plugins", "model"):
        section = getattr(instance, name, None)
        if section is not None:
            found.append(((name,), section))
    for name, provider in (getattr(instance, "providers", None) or {}).items():
        if getattr(provider, "base_url", None) is None and getattr(provider, "transport", None):
            continue  # no server: a virtual transport's entry, whose extras it reads itself
        found.append((("providers", name), provider))
    return found


def unknown_line(document: YamlDocument, unknown: list[UnknownKey]) -> str:
    """The one start-up warning that names every unknown key."""
    count = f"{len(unknown)} unknown key{'s' if len(unknown) != 1 else ''}"
    names = ", ".join(key.short() for key in unknown)
    return f"{document.path}: {count} ignored: {names}; see: hermes doctor"
