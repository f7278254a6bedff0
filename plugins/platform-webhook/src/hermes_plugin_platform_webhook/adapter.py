"""The webhook adapter: named routes on the gateway's HTTP listener (``/webhooks/NAME``).
A request signed with its route's secret (HMAC-SHA256 over the raw body) becomes one turn,
in a session of its own, whose reply goes to a chat of another platform or is POSTed to a
callback URL.

Exactly once: the delivery id (``X-GitHub-Delivery`` or ``X-Hermes-Delivery``) is the
message id, and the gateway's ledger admits an id once, so a sender's retry of the same
delivery never runs a second turn. A request is answered 202 only after the gateway stored
it: a sender that got no answer may safely retry.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_plugin_platform_webhook.settings import Route, WebhookSettings
from hermes_sdk.platform import (
    ChatRef,
    Choice,
    Inbound,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    split_message,
)

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["WebhookAdapter"]

log = logging.getLogger("hermes.webhook")

PLATFORM = "webhook"
SIGNATURE_HEADERS = ("X-Hub-Signature-256", "X-Hermes-Signature-256")
DELIVERY_HEADERS = ("X-GitHub-Delivery", "X-Hermes-Delivery")
EVENT_HEADERS = ("X-GitHub-Event", "X-Hermes-Event")
CALLBACK_TIMEOUT_SECONDS = 20.0
PATH_PREFIX = "/webhooks/"


def _header(request: web.Request, names: Sequence[str]) -> str:
    return next((request.headers[name] for name in names if name in request.headers), "")


class WebhookAdapter:
    max_message_chars = 4000  # a chat's limit; a longer reply goes as several deliveries
    can_edit = False
    sends_notes = False  # nobody reads "continuing after a restart" on a webhook
    pairs_by_default = False
    verifies_senders = True  # every message is a request signed with its route's secret
    untrusted_text = True  # signed by the sender, but the payload quotes anyone (issue bodies)

    def __init__(self, context: PlatformContext) -> None:
        self.settings = WebhookSettings.from_context(context)
        self.host: PlatformHost | None = None
        self.url: str | None = None
        """The listener's base URL, once it listens."""

    def toolsets_for(self, chat: ChatRef) -> tuple[str, ...] | None:
        """The route's toolsets (``platforms.webhook.routes.NAME.toolsets``)."""
        route = self.settings.routes.get(chat.chat_id)
        return route.toolsets if route is not None else ()

    def _route_of(self, chat: ChatRef) -> Route:
        route = self.settings.routes.get(chat.chat_id)
        if route is None:
            raise NotSent(f"webhook route {chat.chat_id!r} is no longer configured")
        return route

    # --- receiving -----------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        import asyncio

        self.host = host
        self.url = await host.http_route(PATH_PREFIX, self._request)
        names = ", ".join(sorted(self.settings.routes))
        log.info("webhook: %s%s<route> (routes: %s)", self.url, PATH_PREFIX, names)
        await asyncio.Event().wait()

    async def _request(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        from hermes_sdk.listener import signature_matches

        if request.method != "POST":
            return web.json_response({"error": "webhooks are POSTed"}, status=405)
        name = request.path.removeprefix(PATH_PREFIX).strip("/")
        route = self.settings.routes.get(name)
        if route is None:
            return web.json_response({"error": f"no webhook route {name!r}"}, status=404)
        body = await request.read()
        signature = _header(request, SIGNATURE_HEADERS)
        if not signature_matches(route.secret, body, signature):
            log.warning(
                "webhook: refused a request to route %s from %s: %s",
                name,
                request.remote,
                "a bad signature" if signature else "no signature",
            )
            return web.json_response({"error": "bad or missing signature"}, status=401)
        try:
            payload = json.loads(body)
        except ValueError:
            return web.json_response({"error": "the body must be JSON"}, status=400)
        event = _header(request, EVENT_HEADERS)
        if event == "ping":  # GitHub's hello when a webhook is added: no turn for it
            return web.json_response({"pong": name})
        if route.events and event not in route.events:
            return web.json_response({"ignored": f"event {event!r}"}, status=202)
        # Without a delivery id every request is a delivery of its own: a monitor that posts
        # the same alert twice means it twice.
        delivery = _header(request, DELIVERY_HEADERS).strip()[:128] or uuid.uuid4().hex
        try:
            text = route.prompt.render(payload, route=name, event=event, delivery=delivery)
        except ValueError as exc:
            log.warning("webhook: %s", exc)
            return web.json_response({"error": str(exc)}, status=422)
        if not text.strip():
            return web.json_response(
                {"error": f"the prompt of route {name!r} is empty for this payload"}, status=422
            )
        if text.lstrip().startswith("/"):  # a payload's text is never a chat command (/new)
            text = f"(webhook {name}) {text}"
        assert self.host is not None
        await self.host.receive(
            Inbound(
                # A session per delivery (the route's memory is shared, as one user's is).
                chat=ChatRef(PLATFORM, name, "private", thread_id=delivery),
                user_id=f"route:{name}",
                user_name=f"webhook {name}",
                text=text,
                message_id=delivery,
            )
        )
        return web.json_response({"accepted": delivery}, status=202)

    # --- replies -------------------------------------------------------------------------

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        from hermes_sdk.runtime import DeliveryUnavailable

        route = self._route_of(chat)
        if self.host is None:  # hermes send --to webhook:...: nothing to answer
            raise NotSent("a webhook is not a chat: its replies go out from a turn it started")
        ids = []
        pieces = split_message(text, self.max_message_chars)
        for number, piece in enumerate(pieces, 1):
            if route.callback_url is not None:
                await self._post_callback(route, chat, piece, number, len(pieces))
            else:
                assert route.deliver_platform and route.deliver_chat
                try:
                    await self.host.forward(route.deliver_platform, route.deliver_chat, piece)
                except DeliveryUnavailable as exc:
                    raise NotSent(f"route {route.name}: {exc}") from None
            ids.append(f"{chat.thread_id or route.name}:{number}")
        return ids

    async def _post_callback(
        self, route: Route, chat: ChatRef, text: str, part: int, parts: int
    ) -> None:
        from hermes_commons.ssrf import Refused, SsrfGuard
        from hermes_commons.ssrf_http import guarded_client

        assert route.callback_url is not None
        guard = SsrfGuard(self.settings.allow_private_hosts)
        # ``delivery`` and ``part`` identify a piece: a retried piece can be dropped by them.
        body = {
            "route": route.name,
            "delivery": chat.thread_id,
            "part": part,
            "parts": parts,
            "text": text,
        }
        try:
            guard.check_url(route.callback_url)
            async with guarded_client(guard, CALLBACK_TIMEOUT_SECONDS, "Hermes webhook") as client:
                response = await client.post(route.callback_url, json=body)
        except Refused as exc:
            raise NotSent(
                f"{exc} (for a callback on this network: platforms.webhook.allow_private_hosts)"
            ) from None
        # Never the URL in these messages: a callback URL often carries a token.
        if 400 <= response.status_code < 500 and response.status_code != 429:
            raise NotSent(f"route {route.name}: the callback answered {response.status_code}")
        if response.status_code >= 300:  # 5xx, 429: it may have arrived; retried
            raise RuntimeError(f"route {route.name}: the callback answered {response.status_code}")

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        raise MessageGone("a webhook reply cannot be edited")

    async def typing(self, chat: ChatRef) -> None:
        return None

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """Nobody can answer a question on a webhook: refusing to show it makes the gateway
        take it as a no at once (a command that needs approval is not run), instead of
        waiting out the timeout."""
        log.info("webhook: route %s: a question was declined (no one to ask)", chat.chat_id)
        raise NotSent("nobody can answer a question on a webhook")

    async def aclose(self) -> None:
        return None
