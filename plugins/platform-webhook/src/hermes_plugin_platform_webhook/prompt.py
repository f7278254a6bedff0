"""A route's prompt: a Jinja template rendered in Jinja's sandbox with the request's JSON.

The template is the user's; the payload is a stranger's, so it is only ever data: the
sandbox refuses attribute tricks, a missing field renders as nothing, and the rendered
prompt is capped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["MAX_PROMPT_CHARS", "Prompt"]

MAX_PROMPT_CHARS = 20_000
DEFAULT_TEMPLATE = (
    "Webhook '{{ route }}' received{% if event %} a '{{ event }}' event{% endif %}:\n\n"
    "```json\n{{ payload | tojson(indent=2) }}\n```"
)


@dataclass(frozen=True, slots=True)
class Prompt:
    template: Any  # a jinja2 Template (jinja2 is imported when a route is configured)

    @classmethod
    def compile(cls, source: object, *, where: str) -> Prompt:
        from jinja2 import ChainableUndefined, TemplateSyntaxError
        from jinja2.sandbox import SandboxedEnvironment

        environment = SandboxedEnvironment(undefined=ChainableUndefined, autoescape=False)
        text = DEFAULT_TEMPLATE if source is None else str(source)
        try:
            return cls(environment.from_string(text))
        except TemplateSyntaxError as exc:
            raise PlatformNotConfigured(
                f"{where} is not a valid template (line {exc.lineno}: {exc.message})"
            ) from None

    def render(self, payload: Any, *, route: str, event: str, delivery: str) -> str:
        """The prompt for one request; a field the payload lacks is empty. Raises
        ValueError (one line) when the template fails on this payload."""
        fields: dict[str, Any] = dict(payload) if isinstance(payload, Mapping) else {}
        fields.update(payload=payload, route=route, event=event, delivery=delivery)
        try:
            text = self.template.render(fields)
        except Exception as exc:  # noqa: BLE001 - a template can fail in any way on a payload
            raise ValueError(f"the prompt template of route '{route}' failed: {exc}") from None
        if len(text) > MAX_PROMPT_CHARS:
            text = text[:MAX_PROMPT_CHARS] + "\n[cut: the payload was longer]"
        return str(text)
