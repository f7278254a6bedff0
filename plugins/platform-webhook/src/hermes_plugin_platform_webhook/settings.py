"""``platforms.webhook``: its named routes, each with its secret, its prompt template and
where the reply goes. Checked whole before anything listens (the gateway's HTTP listener:
``gateway.http_host`` and ``gateway.http_port``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from hermes_commons.ssrf import SsrfGuard
from hermes_plugin_platform_webhook.prompt import Prompt
from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["Route", "WebhookSettings"]

_ROUTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_CHAT_TARGET = re.compile(r"^(?P<platform>[a-z][a-z0-9_-]*):(?P<chat>\S+)$")


DEFAULT_TOOLSETS = ("web", "vision", "clarify")
"""web_search, web_extract, vision_analyze and clarify, as hermes-agent gives webhooks."""


@dataclass(frozen=True, slots=True)
class Route:
    name: str
    secret: str = field(repr=False)
    prompt: Prompt
    deliver_platform: str | None
    """With ``deliver_chat``: the chat the reply goes to (``telegram``, ``12345``)."""
    deliver_chat: str | None
    callback_url: str | None
    """Or: the URL the reply is POSTed to, as JSON."""
    events: frozenset[str]
    """The events (``X-GitHub-Event``) that start a turn; empty: every event."""
    toolsets: tuple[str, ...] = DEFAULT_TOOLSETS
    """The toolsets its turns get: a payload quotes strangers (an issue's body, a
    commit message), so by default only reading the web, looking at images and asking."""


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    routes: Mapping[str, Route]
    allow_private_hosts: tuple[str, ...]

    @classmethod
    def from_context(cls, context: PlatformContext) -> WebhookSettings:
        config = context.config
        raw_routes = config.get("routes")
        if not isinstance(raw_routes, Mapping) or not raw_routes:
            raise PlatformNotConfigured(
                "add a route under platforms.webhook.routes (NAME: {secret_env, prompt, deliver})"
            )
        routes = {
            str(name): _route(str(name), value, context.secrets)
            for name, value in raw_routes.items()
        }
        for moved in ("host", "port"):
            if moved in config:
                raise PlatformNotConfigured(
                    f"platforms.webhook.{moved} is gateway.http_{moved} (the HTTP listener the "
                    "platforms share)"
                )
        private = config.get("allow_private_hosts") or ()
        if isinstance(private, str):
            private = [private]
        if not isinstance(private, list | tuple):
            raise PlatformNotConfigured(
                "platforms.webhook.allow_private_hosts is a list of hosts, host:port or networks"
            )
        allowed = tuple(str(host) for host in private)
        try:
            SsrfGuard(allowed)  # the entries are read now, not at the first reply
        except ValueError as exc:
            raise PlatformNotConfigured(f"platforms.webhook.allow_private_hosts: {exc}") from None
        return cls(
            routes=routes,
            allow_private_hosts=allowed,
        )


def _route(name: str, value: Any, secrets: Mapping[str, str]) -> Route:
    where = f"platforms.webhook.routes.{name}"
    if not _ROUTE_NAME.match(name):
        raise PlatformNotConfigured(
            f"webhook route name {name!r} must be letters, digits, - and _ (it is the URL path)"
        )
    if not isinstance(value, Mapping):
        raise PlatformNotConfigured(f"{where} must be a mapping with secret_env and deliver")
    variable = str(value.get("secret_env") or "").strip()
    if not variable:
        raise PlatformNotConfigured(
            f"set {where}.secret_env to the .env variable that holds the route's signing secret"
        )
    secret = secrets.get(variable, "")
    if len(secret) < 16:
        raise PlatformNotConfigured(
            f"set {variable} in HERMES_HOME/.env to the route's signing secret "
            f"({'too short: at least 16 characters' if secret else 'missing'})"
        )
    deliver = str(value.get("deliver") or "").strip()
    platform = chat = url = None
    target = _CHAT_TARGET.match(deliver)
    if deliver.startswith(("http://", "https://")):
        if not urlsplit(deliver).hostname:
            raise PlatformNotConfigured(f"{where}.deliver {deliver!r} has no host")
        url = deliver
    elif target is not None:
        platform, chat = target["platform"], target["chat"]
        if platform == "webhook":
            raise PlatformNotConfigured(f"{where}.deliver cannot be another webhook")
    else:
        raise PlatformNotConfigured(
            f"set {where}.deliver to PLATFORM:CHAT (telegram:123456) or a callback "
            f"https:// URL, not {deliver!r}"
        )
    events = value.get("events") or ()
    if isinstance(events, str):
        events = [events]
    if not isinstance(events, list | tuple):
        raise PlatformNotConfigured(f"{where}.events is a list of event names, like [push]")
    toolsets = value.get("toolsets", DEFAULT_TOOLSETS)
    if isinstance(toolsets, str):
        toolsets = [toolsets]
    if not isinstance(toolsets, list | tuple):
        raise PlatformNotConfigured(f"{where}.toolsets is a list of toolsets, like [web, files]")
    return Route(
        name=name,
        toolsets=tuple(str(toolset) for toolset in toolsets),
        events=frozenset(str(event) for event in events),
        secret=secret,
        prompt=Prompt.compile(value.get("prompt"), where=f"{where}.prompt"),
        deliver_platform=platform,
        deliver_chat=chat,
        callback_url=url,
    )
