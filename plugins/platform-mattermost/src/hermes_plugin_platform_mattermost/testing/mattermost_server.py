"""A Mattermost server on loopback for tests: the REST API v4 and the websocket the plugin
uses, written from the server's source (``server/channels/api4``, ``app/post.go``,
``app/platform/web_conn.go``, ``model/integration_action.go``).

It keeps posts as the server does (ids of 26 characters, ``create_at``/``update_at`` in ms,
``GET /channels/ID/posts?since=`` by ``update_at``), sends ``posted`` events with the post
as a JSON string and the recipient's ``mentions``, and presses buttons the way the server
does: it posts the action's ``integration.context`` to its ``integration.url``, unsigned,
and applies the ``update`` the integration answers. It also says no: a revoked token (401),
a channel the bot may not post in (403), rate limits (429, plain text, Retry-After), a root
that is not a root (400), a dropped websocket, the same event sent twice."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import string
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Self

import aiohttp
from aiohttp import WSMsgType, web

from hermes_testkit.loopback_app import LoopbackApp

__all__ = ["TOKEN", "FakeMattermost", "Post"]

TOKEN = "mm-bot-token-0123456789"
MAX_POST_RUNES = 16383
_ALPHABET = string.ascii_lowercase + string.digits


def new_id() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(26))


@dataclass
class Post:
    id: str
    channel_id: str
    user_id: str
    message: str
    root_id: str = ""
    create_at: int = 0
    update_at: int = 0
    edit_at: int = 0
    props: dict[str, Any] = field(default_factory=dict)
    file_ids: list[str] = field(default_factory=list)
    ephemeral: list[str] = field(default_factory=list)
    """What a button press showed the presser only (``ephemeral_text``)."""

    def as_json(self, files: dict[str, dict[str, Any]]) -> dict[str, Any]:
        props = {k: v for k, v in self.props.items() if k != "attachments"}
        if "attachments" in self.props:  # integrations are stripped from what clients get
            props["attachments"] = [
                {
                    **a,
                    "actions": [
                        {k: v for k, v in action.items() if k != "integration"}
                        for action in a.get("actions") or ()
                    ],
                }
                for a in self.props["attachments"]
            ]
        post = {
            "id": self.id,
            "create_at": self.create_at,
            "update_at": self.update_at,
            "edit_at": self.edit_at,
            "delete_at": 0,
            "user_id": self.user_id,
            "channel_id": self.channel_id,
            "root_id": self.root_id,
            "message": self.message,
            "type": "",
            "props": props,
            "file_ids": self.file_ids,
        }
        if self.file_ids:
            post["metadata"] = {"files": [files[f] for f in self.file_ids if f in files]}
        return post

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [
            action
            for attachment in self.props.get("attachments") or ()
            for action in attachment.get("actions") or ()
        ]


def _error(status: int, error_id: str, message: str) -> web.Response:
    body = {
        "id": error_id,
        "message": message,
        "detailed_error": "",
        "request_id": new_id(),
        "status_code": status,
    }
    return web.json_response(body, status=status)


class FakeMattermost:
    """One team: the bot (:attr:`bot_id`, ``@hermes``), a public channel
    (:attr:`channel`), and any user a test makes speak (by id; each gets a direct channel
    with the bot)."""

    def __init__(self) -> None:
        self.bot_id = new_id()
        self.bot_name = "hermes"
        self.team_id = new_id()
        self.channel = new_id()
        self.token = TOKEN
        self._lock = threading.RLock()
        self._last_ms = 0
        self.silenced = False
        """Set by :meth:`revoke_token`: the sockets stay open but carry nothing."""
        self._read_limited = 0
        self.users: dict[str, str] = {self.bot_id: self.bot_name}
        self.channels: dict[str, dict[str, Any]] = {
            self.channel: {"id": self.channel, "type": "O", "name": "town-square"}
        }
        self.members: dict[str, set[str]] = {self.channel: {self.bot_id}}
        self.posts: dict[str, Post] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self._file_data: dict[str, bytes] = {}
        self._sockets: list[tuple[web.WebSocketResponse, list[int]]] = []
        self._last_event: dict[str, Any] | None = None
        self.connections = 0
        self.typing: list[tuple[str, str]] = []
        self.refused_channels: set[str] = set()
        self._rate_limited = 0
        self.retry_after = 1
        self.down = False
        self.press_statuses: list[int] = []
        self.action_calls: list[dict[str, Any]] = []
        """What the server posted to integrations for button presses (bodies)."""
        app = web.Application(client_max_size=100 * 1024 * 1024)
        api = "/api/v4"
        app.router.add_get(f"{api}/users/me", self._me)
        app.router.add_get(f"{api}/users/me/channels", self._my_channels)
        app.router.add_get(f"{api}/users/{{user_id}}", self._user)
        app.router.add_post(f"{api}/users/{{user_id}}/typing", self._typing)
        app.router.add_get(f"{api}/channels/{{channel_id}}/posts", self._channel_posts)
        app.router.add_post(f"{api}/posts", self._create_post)
        app.router.add_put(f"{api}/posts/{{post_id}}/patch", self._patch_post)
        app.router.add_post(f"{api}/files", self._upload)
        app.router.add_get(f"{api}/files/{{file_id}}", self._download)
        app.router.add_get(f"{api}/files/{{file_id}}/info", self._file_info)
        app.router.add_get(f"{api}/websocket", self._websocket)
        self._server = LoopbackApp(app, "fake-mattermost")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    # --- what tests do ---------------------------------------------------------------

    def _now(self) -> int:
        """Each post a millisecond of its own, as the server's clock rarely gives two."""
        with self._lock:
            self._last_ms = max(self._last_ms + 1, int(time.time() * 1000))
            return self._last_ms

    def user(self, user_id: str, username: str | None = None) -> str:
        with self._lock:
            self.users.setdefault(user_id, username or f"user-{user_id[:6]}")
            self.members[self.channel].add(user_id)
        return user_id

    def dm(self, user_id: str) -> str:
        """The direct channel between the bot and ``user_id`` (made on first use)."""
        self.user(user_id)
        name = "__".join(sorted((self.bot_id, user_id)))
        with self._lock:
            for channel in self.channels.values():
                if channel["name"] == name:
                    return str(channel["id"])
            channel_id = new_id()
            self.channels[channel_id] = {"id": channel_id, "type": "D", "name": name}
            self.members[channel_id] = {self.bot_id, user_id}
            return channel_id

    def user_says(
        self,
        user_id: str,
        text: str,
        *,
        channel: str | None = None,
        root_id: str = "",
        file_ids: tuple[str, ...] = (),
        connected: bool = True,
        at: int | None = None,
    ) -> Post:
        """``user_id`` posts ``text`` (in a direct message unless ``channel``); the bot's
        websocket gets ``posted`` unless ``connected`` is False (it was away). ``at``: its
        ``create_at``, for posts made in the same millisecond."""
        where = channel or self.dm(user_id)
        self.user(user_id)
        now = at if at is not None else self._now()
        with self._lock:
            post = Post(new_id(), where, user_id, text, root_id, now, now, file_ids=list(file_ids))
            self.posts[post.id] = post
            self.channels[where]["last_post_at"] = now
            for file_id in file_ids:
                self.files[file_id]["post_id"] = post.id
        if connected:
            self._broadcast(post)
        return post

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> Post:
        channel = self.dm(user_id)
        file_id = new_id()
        with self._lock:
            self.files[file_id] = _file_info(file_id, user_id, channel, name, mime, len(data))
            self._file_data[file_id] = data
        return self.user_says(user_id, "", file_ids=(file_id,))

    def deliver_again(self) -> None:
        """The last ``posted`` event again, as after a websocket resume."""
        if self._last_event is not None:
            self._server.call(self._send_all(self._last_event))

    def drop(self) -> None:
        """Close the bot's websockets (a server restart, a proxy's idle timeout)."""
        self._server.call(self._close_all())

    def revoke_token(self) -> None:
        """The token is revoked: REST answers 401, and the websocket, as the real server
        does it, stays open and carries nothing more."""
        self.token = "revoked"
        self.silenced = True

    def limit_reads(self, calls: int = 1) -> None:
        """The next ``calls`` reads of a channel's posts get 429."""
        with self._lock:
            self._read_limited = calls

    def rate_limit(self, posts: int = 1, retry_after: int = 1) -> None:
        """The next ``posts`` posts get 429, as a server with rate limiting on answers."""
        with self._lock:
            self._rate_limited = posts
            self.retry_after = retry_after

    def sent(self, channel: str | None = None, root_id: str | None = None) -> list[Post]:
        """The bot's posts (in ``channel``, in the thread ``root_id``), oldest first."""
        with self._lock:
            return [
                p
                for p in self.posts.values()
                if p.user_id == self.bot_id
                and (channel is None or p.channel_id == channel)
                and (root_id is None or p.root_id == root_id)
            ]

    def sent_to(self, user_id: str) -> list[Post]:
        return self.sent(self.dm(user_id))

    def press(self, user_id: str, post: Post, action_id: str) -> int:
        """``user_id`` presses a button: the server posts its integration's context to its
        URL and applies what the integration answers; the HTTP status it got."""
        return self._server.call(self._press(user_id, post, action_id))

    def press_later(self, user_id: str, post: Post, action_id: str) -> None:
        """:meth:`press`, without waiting for it (from the loop the integration runs on);
        its status is appended to :attr:`press_statuses`."""

        async def pressing() -> None:
            self.press_statuses.append(await self._press(user_id, post, action_id))

        asyncio.run_coroutine_threadsafe(pressing(), self._server.loop)

    def file_data(self, file_id: str) -> tuple[str, bytes]:
        return str(self.files[file_id]["name"]), self._file_data[file_id]

    # --- the websocket ---------------------------------------------------------------

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        return scheme.lower() in ("bearer", "token") and token == self.token

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            return web.Response(status=503, text="upstream unavailable")
        if "Authorization" in request.headers and not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        if not self._authorized(request):  # the authentication_challenge, within 5 s
            try:
                first = await socket.receive_json(timeout=5)
            except (TypeError, ValueError, TimeoutError):
                await socket.close()
                return socket
            if (first.get("data") or {}).get("token") != self.token:
                await socket.close()
                return socket
        self.connections += 1
        seq = [0]
        entry = (socket, seq)
        self._sockets.append(entry)
        hello = {"server_version": "10.5.0", "connection_id": new_id()}
        await self._send(
            entry, {"event": "hello", "data": hello, "broadcast": {"user_id": self.bot_id}}
        )
        try:
            async for frame in socket:
                if frame.type == WSMsgType.TEXT:
                    with contextlib.suppress(ValueError):
                        asked = json.loads(frame.data)
                        reply = {"status": "OK", "seq_reply": asked.get("seq", 0)}
                        await socket.send_str(json.dumps(reply))
        finally:
            with contextlib.suppress(ValueError):
                self._sockets.remove(entry)
        return socket

    async def _send(
        self, entry: tuple[web.WebSocketResponse, list[int]], event: dict[str, Any]
    ) -> None:
        socket, seq = entry
        with contextlib.suppress(ConnectionError, RuntimeError):
            await socket.send_str(json.dumps({**event, "seq": seq[0]}))
            seq[0] += 1

    async def _send_all(self, event: dict[str, Any]) -> None:
        if self.silenced:
            return
        for entry in list(self._sockets):
            await self._send(entry, event)

    async def _close_all(self) -> None:
        for socket, _ in list(self._sockets):
            await socket.close()

    def _broadcast(self, post: Post) -> None:
        channel = self.channels[post.channel_id]
        data: dict[str, Any] = {
            "channel_type": channel["type"],
            "channel_name": channel["name"],
            "post": json.dumps(post.as_json(self.files)),
            "sender_name": f"@{self.users.get(post.user_id, post.user_id)}",
            "team_id": "" if channel["type"] in ("D", "G") else self.team_id,
        }
        named = re.search(rf"(?<![\w.@-])@{self.bot_name}(?![\w-]|\.\w)", post.message, re.I)
        if channel["type"] == "D" or named:
            data["mentions"] = json.dumps([self.bot_id])
        event = {"event": "posted", "data": data, "broadcast": {"channel_id": post.channel_id}}
        self._last_event = event
        self._server.call(self._send_all(event))

    # --- the REST API ----------------------------------------------------------------

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        return web.json_response({"id": self.bot_id, "username": self.bot_name, "is_bot": True})

    async def _user(self, request: web.Request) -> web.Response:
        user_id = request.match_info["user_id"]
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        if user_id not in self.users:
            return _error(404, "app.user.missing_account.const", "Unable to find the user.")
        return web.json_response({"id": user_id, "username": self.users[user_id]})

    async def _my_channels(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        with self._lock:
            mine = [
                {
                    **c,
                    "team_id": "" if c["type"] in ("D", "G") else self.team_id,
                    "last_post_at": c.get("last_post_at", 0),
                }
                for cid, c in self.channels.items()
                if self.bot_id in self.members.get(cid, ())
            ]
        return web.json_response(mine)

    async def _channel_posts(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        channel_id = request.match_info["channel_id"]
        since = int(request.query.get("since") or 0)
        before = request.query.get("before")
        with self._lock:
            if self._read_limited > 0:
                self._read_limited -= 1
                return web.Response(
                    status=429, text="limit exceeded\n", headers={"Retry-After": "1"}
                )
            if before:  # older than the anchor, newest first, a page at a time
                anchor = self.posts.get(before)
                if anchor is None:
                    return _error(400, "api.context.invalid_url_param.app_error", "Invalid before")
                per_page = min(200, int(request.query.get("per_page") or 60))
                older = [
                    p
                    for p in self.posts.values()
                    if p.channel_id == channel_id and p.create_at < anchor.create_at
                ]
                older.sort(key=lambda p: p.create_at, reverse=True)
                page = int(request.query.get("page") or 0)
                found = older[page * per_page : (page + 1) * per_page]
            else:
                found = [
                    p
                    for p in self.posts.values()
                    if p.channel_id == channel_id and p.update_at > since
                ]
                found.sort(key=lambda p: p.create_at, reverse=True)
            listed = {
                "order": [p.id for p in found][:1000],
                "posts": {p.id: p.as_json(self.files) for p in found[:1000]},
                "next_post_id": "",
                "prev_post_id": "",
            }
        return web.json_response(listed)

    async def _create_post(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        with self._lock:
            if self._rate_limited > 0:
                self._rate_limited -= 1
                headers = {"Retry-After": str(self.retry_after), "X-RateLimit-Remaining": "0"}
                return web.Response(status=429, text="limit exceeded\n", headers=headers)
        body = await request.json()
        channel_id = str(body.get("channel_id") or "")
        message = str(body.get("message") or "")
        root_id = str(body.get("root_id") or "")
        with self._lock:
            if channel_id not in self.channels:
                return _error(
                    404, "app.channel.get.existing.app_error", "Unable to find the channel."
                )
            if channel_id in self.refused_channels or self.bot_id not in self.members[channel_id]:
                return _error(
                    403,
                    "api.context.permissions.app_error",
                    "You do not have the appropriate permissions.",
                )
            if root_id:
                root = self.posts.get(root_id)
                if root is None or root.root_id or root.channel_id != channel_id:
                    return _error(
                        400, "api.post.create_post.root_id.app_error", "Invalid RootId parameter."
                    )
            if len(message) > MAX_POST_RUNES:
                return _error(
                    400, "model.post.is_valid.message_length.app_error", "Invalid Message property."
                )
            file_ids = [
                f
                for f in body.get("file_ids") or ()
                if f in self.files
                and self.files[f]["channel_id"] == channel_id
                and not self.files[f].get("post_id")
            ]
            now = self._now()
            props = dict(body.get("props") or {})
            props["from_bot"] = "true"
            for number, action in enumerate(
                (a for att in props.get("attachments") or () for a in att.get("actions") or ()), 1
            ):
                action.setdefault("id", f"generated{number}")
            post = Post(
                new_id(),
                channel_id,
                self.bot_id,
                message,
                root_id,
                now,
                now,
                props=props,
                file_ids=file_ids,
            )
            self.posts[post.id] = post
            self.channels[channel_id]["last_post_at"] = now
            for file_id in file_ids:
                self.files[file_id]["post_id"] = post.id
        return web.json_response(post.as_json(self.files), status=201)

    async def _patch_post(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        body = await request.json()
        with self._lock:
            post = self.posts.get(request.match_info["post_id"])
            if post is None:
                return _error(404, "app.post.get.app_error", "Unable to get the post.")
            if post.user_id != self.bot_id:
                return _error(
                    403,
                    "api.context.permissions.app_error",
                    "You do not have the appropriate permissions.",
                )
            if "message" in body:
                post.message = str(body["message"])
            if "props" in body:
                post.props = dict(body["props"] or {})
            post.update_at = post.edit_at = self._now()
        return web.json_response(post.as_json(self.files))

    async def _typing(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        body = await request.json()
        self.typing.append((str(body.get("channel_id")), str(body.get("parent_id") or "")))
        return web.json_response({"status": "OK"})

    async def _upload(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        reader = await request.multipart()
        channel_id = ""
        infos = []
        async for part in reader:
            if not isinstance(part, aiohttp.BodyPartReader):
                continue
            if part.name == "channel_id":
                channel_id = (await part.read()).decode()
            elif part.filename:
                if not channel_id:
                    return _error(
                        400,
                        "api.file.upload_file.incorrect_channelId.app_error",
                        "channel_id must come before the files",
                    )
                data = bytes(await part.read())
                file_id = new_id()
                mime = part.headers.get("Content-Type", "application/octet-stream")
                info = _file_info(file_id, self.bot_id, channel_id, part.filename, mime, len(data))
                with self._lock:
                    self.files[file_id] = info
                    self._file_data[file_id] = data
                infos.append(info)
        return web.json_response({"file_infos": infos, "client_ids": []}, status=201)

    async def _download(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        file_id = request.match_info["file_id"]
        if file_id not in self._file_data:
            return _error(404, "app.file_info.get.app_error", "Unable to get the file info.")
        info = self.files[file_id]
        return web.Response(body=self._file_data[file_id], content_type=str(info["mime_type"]))

    async def _file_info(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "api.context.session_expired.app_error", "Invalid or expired session"
            )
        info = self.files.get(request.match_info["file_id"])
        if info is None:
            return _error(404, "app.file_info.get.app_error", "Unable to get the file info.")
        return web.json_response(info)

    async def _press(self, user_id: str, post: Post, action_id: str) -> int:
        action = next(a for a in post.buttons if a.get("id") == action_id)
        integration = action["integration"]
        channel = self.channels[post.channel_id]
        body = {
            "user_id": user_id,
            "user_name": self.users.get(user_id, user_id),
            "channel_id": post.channel_id,
            "channel_name": channel["name"],
            "team_id": "" if channel["type"] in ("D", "G") else self.team_id,
            "team_domain": "",
            "post_id": post.id,
            "trigger_id": new_id(),
            "type": "button",
            "data_source": "",
            "context": integration.get("context") or {},
        }
        self.action_calls.append(body)
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                integration["url"], json=body, headers={"Accept": "application/json"}
            ) as response,
        ):
            status = response.status
            answer = await response.json(content_type=None) if status == 200 else None
        if isinstance(answer, dict):
            update = answer.get("update")
            with self._lock:
                if isinstance(update, dict):
                    post.message = str(update.get("message") or "")  # UpdatePost replaces it
                    if update.get("props") is not None:
                        post.props = dict(update["props"])
                    post.update_at = post.edit_at = self._now()
                if answer.get("ephemeral_text"):
                    post.ephemeral.append(str(answer["ephemeral_text"]))
        return status


def _file_info(
    file_id: str, user_id: str, channel_id: str, name: str, mime: str, size: int
) -> dict[str, Any]:
    return {
        "id": file_id,
        "user_id": user_id,
        "post_id": "",
        "channel_id": channel_id,
        "name": name,
        "extension": name.rsplit(".", 1)[-1] if "." in name else "",
        "size": size,
        "mime_type": mime,
    }
