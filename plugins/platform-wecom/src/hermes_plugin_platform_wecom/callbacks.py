"""WeCom's callbacks to a self-built app, checked as WeCom signs them and decrypted with
wechatpy's own cipher (the official algorithm: AES-256-CBC with the EncodingAESKey, a
random prefix, the length, the message and the corp id, PKCS#7 to 32 bytes):

- the URL check: ``GET ?msg_signature&timestamp&nonce&echostr``, answered with the
  decrypted ``echostr``;
- a message or event: ``POST`` of ``<xml><Encrypt>...</Encrypt></xml>``, whose signature is
  the SHA-1 of the sorted token, timestamp, nonce and ciphertext;
- a passive reply (the answer to a typed choice), encrypted and signed the same way.

XML is parsed with defusedxml: a callback's body comes from the internet."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

from hermes_plugin_platform_wecom.settings import WeComSettings

__all__ = ["Refused", "checked_echo", "checked_message", "encrypted_reply", "fields_of"]

MAX_BODY = 64 * 1024
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""Characters XML 1.0 cannot hold."""
FRESH_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Refused(Exception):
    status: int
    why: str

    def __str__(self) -> str:
        return self.why


def _signature(settings: WeComSettings, stamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1(
        "".join(sorted([settings.token, stamp, nonce, encrypted])).encode()
    ).hexdigest()


def _check(settings: WeComSettings, signature: str, stamp: str, nonce: str, encrypted: str) -> None:
    expected = _signature(settings, stamp, nonce, encrypted)
    if not hmac.compare_digest(signature.encode(), expected.encode()):
        raise Refused(401, "the msg_signature is wrong")
    # A callback recorded and posted again later is refused: WeCom's own retries come
    # within seconds, with the timestamp of the first.
    if not stamp.isdigit() or abs(time.time() - int(stamp)) > FRESH_SECONDS:
        raise Refused(401, "the timestamp is not within five minutes of now")


def _decrypt(settings: WeComSettings, encrypted: str) -> str:
    import base64

    from wechatpy.enterprise.crypto import PrpCrypto

    key = base64.b64decode(settings.aes_key + "=")
    try:
        return str(PrpCrypto(key).decrypt(encrypted, settings.corp_id))
    except Exception:  # noqa: BLE001 - wechatpy raises what the bytes make it raise
        raise Refused(400, "the content cannot be decrypted for this corp id") from None


def checked_echo(settings: WeComSettings, query: dict[str, str]) -> str:
    """The URL check's answer: ``echostr`` decrypted, once its signature holds."""
    echo = query.get("echostr", "")
    _check(
        settings,
        query.get("msg_signature", ""),
        query.get("timestamp", ""),
        query.get("nonce", ""),
        echo,
    )
    return _decrypt(settings, echo)


def checked_message(settings: WeComSettings, query: dict[str, str], body: bytes) -> dict[str, str]:
    """A callback's message or event, as its XML's fields; :class:`Refused` otherwise (for
    another app of the corp, too: its AgentID)."""
    if len(body) > MAX_BODY:
        raise Refused(413, "the body is too large for a callback")
    outer = fields_of(body.decode("utf-8", errors="replace"))
    encrypted = outer.get("Encrypt", "")
    if not encrypted:
        raise Refused(400, "the body has no Encrypt element")
    _check(
        settings,
        query.get("msg_signature", ""),
        query.get("timestamp", ""),
        query.get("nonce", ""),
        encrypted,
    )
    fields = fields_of(_decrypt(settings, encrypted))
    agent = fields.get("AgentID", "").strip()
    if fields.get("ToUserName") != settings.corp_id or (agent and agent != str(settings.agent_id)):
        raise Refused(400, "the message is for another corp or app")
    return fields


def fields_of(xml: str) -> dict[str, str]:
    """The top-level elements of a WeCom XML document, as text."""
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root = fromstring(xml)
    except (ParseError, DefusedXmlException, ValueError):
        raise Refused(400, "the body is not WeCom's XML") from None
    return {child.tag: (child.text or "") for child in root}


def encrypted_reply(settings: WeComSettings, to_user: str, text: str) -> str:
    """A passive text reply to ``to_user``, encrypted and signed as WeCom wants it."""
    import base64
    from xml.sax.saxutils import escape

    from wechatpy.enterprise.crypto import PrpCrypto

    now = str(int(time.time()))
    plain = (
        f"<xml><ToUserName><![CDATA[{to_user}]]></ToUserName>"
        f"<FromUserName><![CDATA[{settings.corp_id}]]></FromUserName>"
        f"<CreateTime>{now}</CreateTime><MsgType><![CDATA[text]]></MsgType>"
        f"<Content>{escape(_CONTROLS.sub('', text))}</Content></xml>"
    )
    key = base64.b64decode(settings.aes_key + "=")
    encrypted = PrpCrypto(key).encrypt(plain, settings.corp_id).decode()
    nonce = secrets.token_hex(8)
    signature = _signature(settings, now, nonce, encrypted)
    return (
        f"<xml><Encrypt><![CDATA[{encrypted}]]></Encrypt>"
        f"<MsgSignature><![CDATA[{signature}]]></MsgSignature>"
        f"<TimeStamp>{now}</TimeStamp><Nonce><![CDATA[{nonce}]]></Nonce></xml>"
    )
