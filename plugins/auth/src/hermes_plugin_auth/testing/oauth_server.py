"""A loopback authorization server, written from RFC 8628 (device authorization), RFC 7636
(PKCE, S256) and RFC 6749 (the token endpoint, refresh, its error codes), with GitHub's
Copilot token exchange beside them. It serves every service's paths (the device and token
paths of GitHub, Nous, xAI and Qwen, ``/oauth/authorize``), so ``hermes login NAME
--issuer URL`` signs in against it as against the real service.

MiniMax's user-code sign-in is served too (``/oauth/code``, then ``/oauth/token`` with the
``user_code`` grant), as its clients expect it: HTTP 200 with ``status`` ``pending``,
``success`` or ``error``, ``state`` echoed, ``expired_in`` in epoch milliseconds for the
code and (``minimax_expiry_in_ms``) for the token; its refresh answers the same way.

It says no as a real server does: ``authorization_pending`` until a device code is
approved, ``slow_down`` to a client that polls too fast (and checks that the client then
waited the 5 s more RFC 8628 asks), ``access_denied`` and ``expired_token`` on cue, a code
whose ``code_verifier`` does not match its challenge (``invalid_grant``), a redirect URI
that is not the authorization request's, and a refresh token used twice or revoked.

    with OAuthServer() as server:
        server.device_answers = ["authorization_pending", "slow_down"]  # then approved
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from hermes_testkit.loopback import LoopbackHTTP

__all__ = ["OAuthServer"]

DEVICE_PATHS = (
    "/login/device/code",
    "/api/oauth/device/code",
    "/oauth2/device/code",
    "/api/v1/oauth2/device/code",
)
TOKEN_PATHS = (
    "/login/oauth/access_token",
    "/api/oauth/token",
    "/oauth2/token",
    "/oauth/token",
    "/api/v1/oauth2/token",
)
SLOW_DOWN_SECONDS = 5.0
USER_CODE_GRANT = "urn:ietf:params:oauth:grant-type:user_code"


class OAuthServer(LoopbackHTTP):
    """Context manager: listens on 127.0.0.1 (an ephemeral port)."""

    def __init__(self) -> None:
        super().__init__()
        self.device_answers: list[str] = []
        """What the next polls of a device code hear, in order; then it is approved."""
        self.authorize_answer: str | None = None
        """None approves the browser sign-in; "access_denied" refuses it."""
        self.access_ttl = 3600.0
        self.copilot_api: str | None = None
        """The API address the Copilot exchange names (the test's model server)."""
        self.copilot_ttl = 1800.0
        self.account_id = "acct-kit-1"
        """The account the browser sign-in's id token names (OpenAI's claim)."""
        self.minimax_expiry_in_ms = True
        """The user-code token's ``expired_in`` as an instant in epoch ms (else seconds)."""
        self.minimax_other_state = False
        """Echo another ``state`` than the client's (an answer to another request)."""
        self.issued: list[str] = []
        """Every access token given, in order (the exchange's tokens too)."""
        self.refreshes = 0
        self.exchanges = 0
        self.polls: list[float] = []
        self.slowed_properly: bool | None = None
        """After a slow_down: whether the client waited at least 5 s more."""
        self._codes: dict[str, dict[str, Any]] = {}
        self._devices: dict[str, dict[str, Any]] = {}
        self._refresh_tokens: set[str] = set()
        self._user_codes: dict[str, dict[str, Any]] = {}
        self._minimax_refresh: set[str] = set()
        self._lock = threading.Lock()

    def revoke_refresh_tokens(self) -> None:
        with self._lock:
            self._refresh_tokens.clear()
            self._minimax_refresh.clear()

    # --- serving -----------------------------------------------------------------------

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        self.reply(handler, status, body, headers={"Cache-Control": "no-store"})

    def _error(self, handler: BaseHTTPRequestHandler, code: str, said: str = "") -> None:
        self._send(handler, 400, {"error": code, "error_description": said or code})

    def _tokens(self, refresh: bool = True) -> dict[str, Any]:
        access = f"at-{secrets.token_urlsafe(16)}"
        self.issued.append(access)
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.access_ttl,
            "scope": "inference:invoke",
        }
        if refresh:
            token = f"rt-{secrets.token_urlsafe(16)}"
            self._refresh_tokens.add(token)
            body["refresh_token"] = token
        return body

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/oauth/authorize":
            redirect = query.get("redirect_uri", "")
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                self._error(handler, "invalid_request", "PKCE S256 is required")
                return
            state = query.get("state", "")
            if self.authorize_answer:
                target = f"{redirect}?{urlencode({'error': self.authorize_answer, 'state': state})}"
            else:
                code = secrets.token_urlsafe(12)
                self._codes[code] = {
                    "challenge": query["code_challenge"],
                    "redirect_uri": redirect,
                    "client_id": query.get("client_id"),
                }
                target = f"{redirect}?{urlencode({'code': code, 'state': state})}"
            handler.send_response(302)
            handler.send_header("Location", target)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if url.path.endswith("/copilot_internal/v2/token"):
            given = handler.headers.get("Authorization", "")
            if not given.startswith("token ") or given.removeprefix("token ") not in self.issued:
                self._send(handler, 401, {"message": "Bad credentials"})
                return
            self.exchanges += 1
            token = f"copilot-{secrets.token_urlsafe(12)}"
            self.issued.append(token)
            body: dict[str, Any] = {"token": token, "expires_at": time.time() + self.copilot_ttl}
            if self.copilot_api:
                body["endpoints"] = {"api": self.copilot_api}
            self._send(handler, 200, body)
            return
        self._send(handler, 404, {"error": "not_found"})

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length).decode()
        if "json" in (handler.headers.get("Content-Type") or ""):
            form = {k: str(v) for k, v in json.loads(raw or "{}").items()}
        else:
            form = {k: v[0] for k, v in parse_qs(raw).items()}
        self._answer(handler, form)

    def _answer(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        path = urlsplit(handler.path).path
        with self._lock:
            if path in DEVICE_PATHS:
                device = secrets.token_urlsafe(16)
                self._devices[device] = {
                    "answers": list(self.device_answers),
                    "challenge": form.get("code_challenge"),
                    "last": None,
                    "interval": 0.0,
                }
                self._send(
                    handler,
                    200,
                    {
                        "device_code": device,
                        "user_code": "WDJB-MJHT",
                        "verification_uri": f"{self.url}/device",
                        "expires_in": 900,
                        "interval": 0,
                    },
                )
            elif path == "/oauth/code":
                self._user_code(handler, form)
            elif path in TOKEN_PATHS and form.get("grant_type") == USER_CODE_GRANT:
                self._user_code_token(handler, form)
            elif path in TOKEN_PATHS and form.get("refresh_token") in self._minimax_refresh:
                self._minimax_refreshed(handler, form)
            elif path in TOKEN_PATHS:
                self._token(handler, form)
            else:
                self._send(handler, 404, {"error": "not_found"})

    def _token(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:device_code":
            device = self._devices.get(form.get("device_code", ""))
            if device is None:
                self._error(handler, "invalid_grant", "unknown device code")
                return
            now = time.monotonic()
            self.polls.append(now)
            if device["last"] is not None and device["interval"]:
                self.slowed_properly = now - device["last"] >= device["interval"] - 0.05
            device["last"] = now
            if device["answers"]:
                answer = device["answers"].pop(0)
                if answer == "slow_down":
                    device["interval"] = SLOW_DOWN_SECONDS
                self._error(handler, answer)
                return
            if device["challenge"] and not _verifies(
                form.get("code_verifier"), device["challenge"]
            ):
                self._error(handler, "invalid_grant", "PKCE verification failed")
                return
            del self._devices[form["device_code"]]
            self._send(handler, 200, self._tokens())
        elif grant == "authorization_code":
            code = self._codes.pop(form.get("code", ""), None)
            if code is None:
                self._error(handler, "invalid_grant", "unknown or used code")
            elif form.get("redirect_uri") != code["redirect_uri"]:
                self._error(handler, "invalid_grant", "redirect_uri differs from the request's")
            elif not _verifies(form.get("code_verifier"), code["challenge"]):
                self._error(handler, "invalid_grant", "PKCE verification failed")
            else:
                tokens = self._tokens()
                tokens["id_token"] = _unsigned_jwt(
                    {"https://api.openai.com/auth": {"chatgpt_account_id": self.account_id}}
                )
                self._send(handler, 200, tokens)
        elif grant == "refresh_token":
            token = form.get("refresh_token", "")
            if token not in self._refresh_tokens:
                self._error(handler, "invalid_grant", "refresh token is invalid or was used")
                return
            self._refresh_tokens.discard(token)  # rotated: a refresh token is good once
            self.refreshes += 1
            self._send(handler, 200, self._tokens())
        else:
            self._error(handler, "unsupported_grant_type")

    # --- MiniMax's user-code sign-in ----------------------------------------------------

    def _minimax_tokens(self) -> dict[str, Any]:
        body = self._tokens()
        self._refresh_tokens.discard(body["refresh_token"])
        self._minimax_refresh.add(body["refresh_token"])
        ttl = body.pop("expires_in")
        expires = (time.time() + ttl) * 1000 if self.minimax_expiry_in_ms else ttl
        return body | {"status": "success", "expired_in": int(expires)}

    def _user_code(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        if form.get("code_challenge_method") != "S256" or not form.get("code_challenge"):
            self._send(handler, 400, {"base_resp": {"status_code": 1002, "status_msg": "pkce"}})
            return
        code = f"MM-{secrets.token_hex(3).upper()}"
        self._user_codes[code] = {
            "answers": list(self.device_answers),
            "challenge": form["code_challenge"],
        }
        state = "another" if self.minimax_other_state else form.get("state", "")
        self._send(
            handler,
            200,
            {
                "user_code": code,
                "verification_uri": f"{self.url}/oauth/verify?user_code={code}",
                "expired_in": int((time.time() + 600) * 1000),
                "interval": 1000,
                "state": state,
            },
        )

    def _user_code_token(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        code = self._user_codes.get(form.get("user_code", ""))
        self.polls.append(time.monotonic())
        if code is None:
            self._send(handler, 400, {"base_resp": {"status_code": 1004, "status_msg": "code"}})
            return
        if code["answers"]:
            answer = code["answers"].pop(0)
            if answer == "access_denied":
                self._send(handler, 200, {"status": "error", "base_resp": {"status_msg": answer}})
            else:
                self._send(handler, 200, {"status": "pending"})
            return
        if not _verifies(form.get("code_verifier"), code["challenge"]):
            said = {"status_code": 1004, "status_msg": "invalid_grant: code_verifier"}
            self._send(handler, 400, {"base_resp": said})
            return
        del self._user_codes[form["user_code"]]
        self._send(handler, 200, self._minimax_tokens())

    def _minimax_refreshed(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        self._minimax_refresh.discard(form["refresh_token"])  # rotated, as the others
        self.refreshes += 1
        self._send(handler, 200, self._minimax_tokens())


def _unsigned_jwt(claims: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}.kit"


def _verifies(verifier: str | None, challenge: str) -> bool:
    if not verifier:
        return False
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == challenge
