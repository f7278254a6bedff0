"""How a tool is called: the one dispatch the turn engine and the conformance suites share.

* :func:`check_arguments` validates the model's arguments against the tool's JSON schema with
  a real validator (``jsonschema``), so a handler never runs on arguments its schema refuses.
* :func:`call_tool` runs the handler as the engine does: a coroutine function is awaited on
  the running loop, a plain function runs in a worker thread (a sync wrapper that returns an
  awaitable has it awaited), and a tool with ``takes_context`` gets ``context=``.
* :func:`signature_problems` lists where a tool's schema and its handler's signature disagree:
  the model is told to send what the schema says, so the handler must take exactly that.
* :func:`result_problem` says what is wrong with a handler's result: the contract is text
  (``str``), which is what the model reads.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hermes_sdk.specs import ToolSpec
from hermes_sdk.tooling import ToolContext

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "ArgumentsRejected",
    "call_tool",
    "check_arguments",
    "lenient_arguments",
    "result_problem",
    "schema_problem",
    "signature_problems",
]

_CONTEXT = "context"
_SHOWN_ERRORS = 3


class ArgumentsRejected(ValueError):
    """The arguments do not fit the tool's schema; the message is one line naming each misfit."""


@lru_cache(maxsize=512)
def _validator_for(key: str) -> Validator:
    import json

    from jsonschema.validators import validator_for

    schema = json.loads(key)
    cls = validator_for(schema)  # the schema's own $schema, else the newest draft
    validator: Validator = cls(schema)
    return validator


def _schema_key(spec: ToolSpec) -> str:
    import json

    return json.dumps(spec.parameters, sort_keys=True, default=str)


def schema_problem(spec: ToolSpec) -> str | None:
    """Why ``spec.parameters`` is not a valid JSON schema, or None when it is."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(dict(spec.parameters)).check_schema(dict(spec.parameters))
    except SchemaError as exc:
        return f"tool {spec.name!r}: its parameters are not a valid JSON schema: {exc.message}"
    return None


def _where(path: Any) -> str:
    parts = [str(part) for part in path]
    return "/".join(parts) if parts else "the arguments"


def lenient_arguments(raw: str) -> dict[str, Any]:
    """A model's JSON arguments as an object, {} when they are not one: for showing and
    summarizing a call, never for running it (that is check_arguments' work)."""
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any]) -> None:
    """Raise :class:`ArgumentsRejected` when ``arguments`` do not fit ``spec.parameters``."""
    try:
        validator = _validator_for(_schema_key(spec))
        errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
    except Exception as exc:  # noqa: BLE001 - the schema itself is broken (an unknown type)
        # The plugin's mistake, not the model's: the tool runs as it did before validation
        # (ToolsTests reports the schema to its author), and the log says so once.
        _warn_once(spec.name, exc)
        return
    if not errors:
        return
    described = [f"{_where(e.path)}: {e.message}" for e in errors[:_SHOWN_ERRORS]]
    more = len(errors) - _SHOWN_ERRORS
    if more > 0:
        described.append(f"and {more} more")
    raise ArgumentsRejected("; ".join(" ".join(d.split()) for d in described))


_WARNED: set[str] = set()


def _warn_once(name: str, exc: Exception) -> None:
    if name not in _WARNED:
        _WARNED.add(name)
        import logging

        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        logging.getLogger("hermes.tools").warning(
            "tool %r: its schema cannot be checked (%s); its arguments go unchecked", name, first
        )


def _is_coroutine_function(handler: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


async def call_tool(
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    context: ToolContext | Callable[[], ToolContext] | None = None,
    *,
    offload: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
) -> Any:
    """Run ``spec.handler`` on ``arguments`` (already checked) and return what it returned.

    ``context`` (or a function that builds it on first need) is passed as ``context=`` when
    the tool takes one; without it such a tool gets a context with no backend. A handler
    that is not a coroutine function runs through ``offload`` (default: a thread of
    asyncio's default executor); the kernel passes threads that never hold up an exit.
    """
    kwargs = dict(arguments)
    if spec.takes_context:
        if callable(context):
            context = context()
        kwargs[_CONTEXT] = (
            context if context is not None else ToolContext(session_id="", home="", cwd="")
        )
    handler = spec.handler
    if _is_coroutine_function(handler):
        return await handler(**kwargs)
    if offload is None:
        result = await asyncio.to_thread(handler, **kwargs)
    else:
        result = await offload(functools.partial(handler, **kwargs))
    if inspect.isawaitable(result):
        result = await result
    return result


def signature_problems(spec: ToolSpec) -> list[str]:
    """Each place where the schema and the handler's signature disagree, one line each.

    Every required property is a parameter, every parameter without a default is required,
    and the handler can take every property. A handler taking ``**kwargs`` accepts any
    property; ``context`` is the kernel's to pass, never the model's.
    """
    name = spec.name
    try:
        signature = inspect.signature(spec.handler)
    except (TypeError, ValueError):
        return []  # a builtin without a signature: nothing to compare
    properties = set(spec.parameters.get("properties", {}) or {})
    required = set(spec.parameters.get("required", []) or [])
    params = dict(signature.parameters)
    problems: list[str] = []
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    context = params.pop(_CONTEXT, None)
    if spec.takes_context and context is None and not takes_any:
        problems.append(f"{name}: takes_context is set, but the handler has no 'context' parameter")
    if not spec.takes_context and context is not None and context.default is context.empty:
        problems.append(f"{name}: the handler needs 'context'; set takes_context=True")
    if _CONTEXT in properties:
        problems.append(f"{name}: 'context' is the kernel's argument; rename that property")
    named = {
        key: p
        for key, p in params.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    for key, p in params.items():
        if p.kind is inspect.Parameter.POSITIONAL_ONLY and p.default is p.empty:
            problems.append(f"{name}: parameter {key!r} is positional-only; arguments come by name")
    for key in sorted(required - set(named)):
        if not takes_any:
            problems.append(f"{name}: required property {key!r} is not a parameter of the handler")
    for key, p in sorted(named.items()):
        if p.default is p.empty and key not in required:
            where = "is not a property" if key not in properties else "is not required"
            problems.append(
                f"{name}: parameter {key!r} has no default but {where} in the schema "
                "(give it a default, or list it in 'required')"
            )
    if not takes_any:
        for key in sorted(properties - set(named)):
            problems.append(f"{name}: property {key!r} is not a parameter the handler can take")
    return problems


def result_problem(value: Any) -> str | None:
    """What breaks the result contract (text), or None for a proper result."""
    if isinstance(value, str):
        return None
    return (
        f"returned {type(value).__name__} {value!r:.80}; a tool returns text (str) for the "
        "model to read: format numbers and structures into a string"
    )
