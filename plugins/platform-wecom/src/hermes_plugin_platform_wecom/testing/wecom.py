"""WeCom on loopback for tests, from its public reference (接收消息与事件, 加解密方案,
发送应用消息, 素材管理) and the official sample ``WXBizMsgCrypt``:

- callbacks to the app as WeCom sends them: the URL check (``echostr``), messages as
  ``<xml><Encrypt>`` posted with ``msg_signature``, ``timestamp`` and ``nonce``; the
  content encrypted here, independently of wechatpy (which the app decrypts with): a random
  16 bytes, the length (network order), the XML and the corp id, PKCS#7 to 32 bytes,
  AES-256-CBC with the EncodingAESKey and its first 16 bytes as the IV; the same body posted
  again, as WeCom does when the answer is slow; forged ones (another signature, token, key
  or corp id); and a passive reply decrypted and its signature checked;
- the API: ``cgi-bin/gettoken`` (40013 for another corp id, 40001 for a wrong secret),
  ``message/send`` (40014 for a token it did not issue or revoked, 45009 when limited,
  60020 for an untrusted IP, ``invaliduser`` for a person outside the app), media upload
  and download.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import os
import secrets
import struct
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self
from xml.sax.saxutils import escape

import aiohttp
from aiohttp import web

from hermes_testkit.loopback_app import LoopbackApp

if TYPE_CHECKING:
    from hermes_sdk.platform import PlatformContext

__all__ = ["FakeWeCom", "Sent"]

AGENT_ID = 1000002


@dataclass
class Sent:
    """A message the app sent through ``message/send``."""

    to_user: str
    kind: str
    text: str
    media_id: str
    message_id: str


def _pad(data: bytes) -> bytes:
    size = 32 - len(data) % 32
    return data + bytes([size]) * size


class FakeWeCom:
    """WeCom for one corp and its self-built app; callbacks go to ``callback_url`` (set
    it once the gateway's listener is known)."""

    def __init__(self) -> None:
        self.corp_id = f"ww{secrets.token_hex(8)}"
        self.agent_id = AGENT_ID
        self.corp_secret = secrets.token_urlsafe(32)
        self.token = secrets.token_urlsafe(12)
        self.aes_key = base64.b64encode(os.urandom(32)).decode().rstrip("=")
        self.callback_url = ""
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.tokens: set[str] = set()
        self.token_grants = 0
        self.sent: list[Sent] = []
        self.media: dict[str, tuple[bytes, str, str]] = {}
        """Media ids: content, type, name (what people sent, what the app uploaded)."""
        self.members: set[str] = set()
        self.untrusted_ip = False
        self._limited = 0
        self._last: tuple[str, dict[str, str]] | None = None
        app = web.Application()
        app.router.add_get("/cgi-bin/gettoken", self._token)
        app.router.add_post("/cgi-bin/message/send", self._send)
        app.router.add_post("/cgi-bin/media/upload", self._upload)
        app.router.add_get("/cgi-bin/media/get", self._media)
        self._server = LoopbackApp(app, "fake-wecom")

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    def context(self, home: str, *, configured: bool = True) -> PlatformContext:
        """The platform's context for this corp's app (``configured=False``: no secrets)."""
        from hermes_sdk.platform import PlatformContext

        config = {"corp_id": self.corp_id, "agent_id": self.agent_id, "api_url": self.url}
        secrets_ = {
            "WECOM_CALLBACK_CORP_SECRET": self.corp_secret,
            "WECOM_CALLBACK_TOKEN": self.token,
            "WECOM_CALLBACK_ENCODING_AES_KEY": self.aes_key,
        }
        return PlatformContext(
            name="wecom", home=home, config=config, secrets=secrets_ if configured else {}
        )

    def sent_to(self, user: str) -> list[Sent]:
        with self._lock:
            return [m for m in self.sent if m.to_user == user]

    def limit(self, times: int = 1) -> None:
        self._limited = times

    def revoke_tokens(self) -> None:
        with self._lock:
            self.tokens.clear()

    # --- the crypto, from the reference ----------------------------------------------------

    def _key(self, aes_key: str | None = None) -> bytes:
        return base64.b64decode((aes_key or self.aes_key) + "=")

    def encrypt(self, plain: str, *, aes_key: str | None = None, corp_id: str | None = None) -> str:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        message = plain.encode()
        raw = os.urandom(16) + struct.pack(">I", len(message)) + message
        raw += (corp_id or self.corp_id).encode()
        key = self._key(aes_key)
        encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
        return base64.b64encode(encryptor.update(_pad(raw)) + encryptor.finalize()).decode()

    def decrypt(self, encrypted: str) -> str:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        key = self._key()
        decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
        raw = decryptor.update(base64.b64decode(encrypted)) + decryptor.finalize()
        raw = raw[: -raw[-1]]
        (length,) = struct.unpack(">I", raw[16:20])
        if raw[20 + length :].decode() != self.corp_id:
            raise ValueError("encrypted for another corp")
        return raw[20 : 20 + length].decode()

    def sign(self, stamp: str, nonce: str, encrypted: str, token: str | None = None) -> str:
        parts = sorted([token or self.token, stamp, nonce, encrypted])
        return hashlib.sha1("".join(parts).encode()).hexdigest()

    def open_reply(self, body: str) -> dict[str, str]:
        """A passive reply's fields, once its signature is checked and it is decrypted."""
        from defusedxml.ElementTree import fromstring

        outer = {c.tag: c.text or "" for c in fromstring(body)}
        expected = self.sign(outer["TimeStamp"], outer["Nonce"], outer["Encrypt"])
        assert outer["MsgSignature"] == expected, "the reply's signature is wrong"
        return {c.tag: c.text or "" for c in fromstring(self.decrypt(outer["Encrypt"]))}

    # --- callbacks -----------------------------------------------------------------------

    def verify_url(self, *, token: str | None = None) -> tuple[int, str]:
        """WeCom's check of the callback URL: the app must answer the echo decrypted."""
        echo_plain = secrets.token_hex(8)
        echo = self.encrypt(echo_plain)
        stamp, nonce = str(int(time.time())), secrets.token_hex(5)
        query = {
            "msg_signature": self.sign(stamp, nonce, echo, token),
            "timestamp": stamp,
            "nonce": nonce,
            "echostr": echo,
        }
        status, text = self._server.call(self._request("GET", query, b""))
        return status, ("echoed" if text == echo_plain else text)

    def user_says(self, user: str, text: str = "", **fields: str) -> tuple[int, str]:
        """``user`` writes to the app (``fields``: another message kind's elements)."""
        message = {
            "ToUserName": self.corp_id,
            "FromUserName": user,
            "CreateTime": str(int(time.time())),
            "MsgType": "text",
            "Content": text,
            "MsgId": str(7_000_000_000_000_000_000 + next(self._ids)),
            "AgentID": str(self.agent_id),
        }
        if fields:
            del message["Content"]
        message.update(fields)
        return self.post(message)

    def user_sends_file(
        self, user: str, data: bytes, name: str, mime: str, *, kind: str = "file"
    ) -> tuple[int, str]:
        media_id = f"media_{secrets.token_hex(8)}"
        with self._lock:
            self.media[media_id] = (data, mime, name)
        extra = {"MsgType": kind, "MediaId": media_id}
        if kind == "image":
            extra["PicUrl"] = f"{self.url}/pic/{media_id}"
        elif kind == "voice":
            extra["Format"] = "amr"
        elif kind == "file":
            extra["FileName"] = name
        return self.user_says(user, **extra)

    def post(
        self,
        message: dict[str, str],
        *,
        signature: str | None = None,
        token: str | None = None,
        aes_key: str | None = None,
        corp_id: str | None = None,
        stamp: str | None = None,
    ) -> tuple[int, str]:
        """POST ``message`` to the app as WeCom does; the keywords forge it (``stamp``: a
        callback recorded then, posted now)."""
        inner = (
            "<xml>"
            + "".join(
                f"<{k}><![CDATA[{v}]]></{k}>" if not v.isdigit() else f"<{k}>{v}</{k}>"
                for k, v in message.items()
            )
            + "</xml>"
        )
        encrypted = self.encrypt(inner, aes_key=aes_key, corp_id=corp_id)
        stamp, nonce = stamp or str(int(time.time())), secrets.token_hex(5)
        query = {
            "msg_signature": signature or self.sign(stamp, nonce, encrypted, token),
            "timestamp": stamp,
            "nonce": nonce,
        }
        body = (
            f"<xml><ToUserName><![CDATA[{escape(self.corp_id)}]]></ToUserName>"
            f"<AgentID><![CDATA[{self.agent_id}]]></AgentID>"
            f"<Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>"
        ).encode()
        self._last = (body.decode(), query)
        return self._server.call(self._request("POST", query, body))

    def deliver_again(self) -> tuple[int, str]:
        """The last callback posted again, byte for byte (WeCom's retry)."""
        assert self._last is not None
        body, query = self._last
        return self._server.call(self._request("POST", query, body.encode()))

    async def _request(self, method: str, query: dict[str, str], body: bytes) -> tuple[int, str]:
        async with (
            aiohttp.ClientSession() as session,
            session.request(method, self.callback_url, params=query, data=body) as response,
        ):
            return response.status, await response.text()

    # --- the API -------------------------------------------------------------------------

    @staticmethod
    def _answer(code: int = 0, message: str = "ok", **more: Any) -> web.Response:
        return web.json_response({"errcode": code, "errmsg": message, **more})

    async def _token(self, request: web.Request) -> web.Response:
        if request.query.get("corpid") != self.corp_id:
            return self._answer(40013, "invalid corpid")
        if request.query.get("corpsecret") != self.corp_secret:
            return self._answer(40001, "invalid credential")
        token = secrets.token_urlsafe(24)
        with self._lock:
            self.tokens.add(token)
            self.token_grants += 1
        return self._answer(access_token=token, expires_in=7200)

    def _refusal(self, request: web.Request) -> web.Response | None:
        if request.query.get("access_token") not in self.tokens:
            return self._answer(40014, "invalid access_token")
        if self.untrusted_ip:
            return self._answer(60020, "not allow to access from your ip")
        if self._limited > 0:
            self._limited -= 1
            return self._answer(45009, "reach max api daily quota limit")
        return None

    async def _send(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        body = await request.json()
        kind = str(body.get("msgtype") or "")
        if body.get("agentid") != self.agent_id:
            return self._answer(40056, "invalid agentid")
        part = body.get(kind) or {}
        text = str(part.get("content") or "")
        if kind in ("text", "markdown") and len(text.encode()) > 2048:
            return self._answer(44004, "text content over limit")
        to_user = str(body.get("touser") or "")
        if self.members and to_user not in self.members:
            return self._answer(invaliduser=to_user, msgid="")
        message_id = f"msg{next(self._ids)}"
        with self._lock:
            self.sent.append(Sent(to_user, kind, text, str(part.get("media_id") or ""), message_id))
        return self._answer(invaliduser="", msgid=message_id)

    async def _upload(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        form = await request.post()
        part = form.get("media")
        if not isinstance(part, web.FileField):
            return self._answer(41001, "missing media")
        if "%" in (part.filename or ""):  # WeCom shows a percent-encoded name as it is
            return self._answer(40006, "invalid media name: percent-encoded")
        media_id = f"up_{secrets.token_hex(8)}"
        with self._lock:
            self.media[media_id] = (part.file.read(), part.content_type, part.filename)
        return self._answer(
            type=request.query.get("type"), media_id=media_id, created_at=str(int(time.time()))
        )

    async def _media(self, request: web.Request) -> web.Response:
        if refused := self._refusal(request):
            return refused
        found = self.media.get(request.query.get("media_id", ""))
        if found is None:
            return self._answer(40007, "invalid media_id")
        data, mime, name = found
        return web.Response(
            body=data,
            headers={"Content-Type": mime, "Content-Disposition": f'attachment; filename="{name}"'},
        )

    def files_to(self, user: str) -> list[tuple[str, bytes]]:
        """The files the app sent to ``user``: (name, content)."""
        found = []
        for message in self.sent_to(user):
            if message.media_id in self.media:
                data, _, name = self.media[message.media_id]
                found.append((name, data))
        return found
