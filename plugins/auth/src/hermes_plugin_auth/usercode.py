"""MiniMax's sign-in, as its own clients (hermes-agent 0.19, OpenClaw) do it. It looks like
RFC 8628 but is not: the code request carries a PKCE challenge and a ``state`` the answer
echoes; the token request names the *user* code with the grant type
``urn:ietf:params:oauth:grant-type:user_code`` and the verifier; every answer is HTTP 200
with ``status`` ``pending``, ``success`` or ``error``; and ``expired_in`` is either a
lifetime in seconds or an instant in epoch milliseconds. No OAuth library speaks it, so it
is written here on httpx; refresh is RFC 6749's grant, answered the same way."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from hermes_plugin_auth.oauth import TIMEOUT, SignInError, Tokens, qr_code
from hermes_plugin_auth.services import Service

GRANT = "urn:ietf:params:oauth:grant-type:user_code"
MIN_INTERVAL = 2.0
"""However fast the server says to poll, as its own clients (never faster than 2 s)."""
_REFUSED = ("invalid_grant", "refresh_token_reused", "invalid_refresh_token")


def expiry(expired_in: Any, now: float) -> float:
    """Epoch seconds from MiniMax's ``expired_in``: an instant in milliseconds when it is
    larger than half of now's (no lifetime is that long), else a lifetime in seconds."""
    raw = float(expired_in)
    if raw > now * 1000 / 2:
        return raw / 1000
    return now + max(1.0, raw)


def _post(service: Service, url: str, form: dict[str, str], what: str) -> tuple[int, Any]:
    import httpx

    try:
        answer = httpx.post(
            url,
            data=form,
            headers={"Accept": "application/json", "x-request-id": str(uuid.uuid4())},
            timeout=TIMEOUT,
            follow_redirects=True,
        )
    except httpx.HTTPError as error:
        raise SignInError(
            f"cannot reach {service.label} {what}: {type(error).__name__}", temporary=True
        ) from None
    try:
        body = answer.json() if answer.content else {}
    except ValueError:
        body = {}
    return answer.status_code, body if isinstance(body, dict) else {}


def _said(body: dict[str, Any], status: int) -> str:
    said = (body.get("base_resp") or {}).get("status_msg") if body else None
    return str(said or body.get("error_description") or body.get("error") or f"HTTP {status}")


def _refusal(service: Service, status: int, body: dict[str, Any], what: str) -> SignInError:
    """``what``: the sign-in step, as a noun ("the sign-in", "the renewal")."""
    said = _said(body, status)
    if status == 429 or status >= 500:
        return SignInError(f"{service.label} could not answer {what} now ({said})", temporary=True)
    return SignInError(f"{service.label} refused {what} ({said})")


def _tokens(
    service: Service, body: dict[str, Any], now: float, kept_refresh: str | None = None
) -> Tokens:
    """The tokens of a ``success`` answer; a sign-in must come with its refresh token (a
    renewal may keep the one it had: ``kept_refresh``)."""
    try:
        refresh_token = str(body.get("refresh_token") or kept_refresh or "")
        if not body["access_token"] or not refresh_token:
            raise KeyError("refresh_token")
        return Tokens(
            access_token=str(body["access_token"]),
            refresh_token=refresh_token,
            expires_at=expiry(body["expired_in"], now),
        )
    except (KeyError, TypeError, ValueError):
        raise SignInError(
            f"{service.label} answered with something that is not a token", temporary=True
        ) from None


def _number(value: Any, what: str, service: Service) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise SignInError(
            f"{service.label} answered the sign-in with an odd {what} ({str(value)[:40]!r})",
            temporary=True,
        ) from None


def user_code_flow(
    service: Service,
    issuer: str,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    show_qr: bool = False,
) -> Tokens:
    from authlib.common.security import generate_token
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    verifier = generate_token(64)
    state = generate_token(16)
    base = issuer.rstrip("/")
    status, code = _post(
        service,
        base + service.device_path,
        {
            "response_type": "code",
            "client_id": service.client_id,
            "scope": service.scope,
            "code_challenge": create_s256_code_challenge(verifier),
            "code_challenge_method": "S256",
            "state": state,
        },
        f"to sign in at {issuer}",
    )
    if status != 200:
        raise _refusal(service, status, code, "the sign-in")
    if not all(code.get(k) for k in ("user_code", "verification_uri", "expired_in")):
        said = f" ({_said(code, status)})" if code.get("base_resp") else ""
        raise SignInError(f"{service.label} answered the sign-in oddly{said}", temporary=True)
    if code.get("state") != state:  # an answer to another request: never follow it
        raise SignInError(f"{service.label} answered with another sign-in's state; try again")
    where = str(code["verification_uri"])
    say(f"Open {where} and enter the code {code['user_code']} if asked")
    if show_qr:
        say(qr_code(where))
    interval = max(MIN_INTERVAL, _number(code.get("interval") or 2000, "interval", service) / 1000)
    deadline = expiry(_number(code["expired_in"], "expiry", service), time.time())
    form = {
        "grant_type": GRANT,
        "client_id": service.client_id,
        "user_code": str(code["user_code"]),
        "code_verifier": verifier,
    }
    while time.time() < deadline:
        sleep(interval)
        status, answer = _post(service, base + service.token_path, form, "for the token")
        if status != 200:
            raise _refusal(service, status, answer, "the sign-in")
        if answer.get("status") == "success":
            tokens = _tokens(service, answer, time.time())
            if answer.get("notification_message"):
                say(f"{service.label} says: {answer['notification_message']}")
            return tokens
        if answer.get("status") == "error":
            raise SignInError(f"the sign-in to {service.label} was refused ({_said(answer, 200)})")
    raise SignInError(
        f"the code expired before it was approved: run hermes login {service.name} again"
    )


def refresh(service: Service, issuer: str, refresh_token: str) -> Tokens:
    status, answer = _post(
        service,
        issuer.rstrip("/") + service.token_path,
        {
            "grant_type": "refresh_token",
            "client_id": service.client_id,
            "refresh_token": refresh_token,
        },
        "to renew the sign-in",
    )
    if status != 200:
        said = str(answer).lower()
        if (400 <= status < 500 and status != 429) or any(word in said for word in _REFUSED):
            raise SignInError(f"{service.label} refused to renew ({_said(answer, status)})")
        raise _refusal(service, status, answer, "the renewal")
    if answer.get("status") != "success":
        raise SignInError(f"{service.label} did not renew the sign-in ({_said(answer, 200)})")
    return _tokens(service, answer, time.time(), kept_refresh=refresh_token)
