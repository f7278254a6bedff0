"""The OAuth 2.0 flows, with Authlib's client (blocking: sign-ins run in the command, refreshes
in a worker thread).

- The device authorization grant (RFC 8628): the user opens a URL and types a code while
  Hermes polls, at the interval the server gives, longer after ``slow_down``, until the
  token comes, or ``access_denied`` / ``expired_token`` end it in one line.
- The authorization code grant with PKCE (RFC 7636, S256) on a loopback redirect; without a
  browser (over SSH), the address the browser was sent to is pasted back instead.
- The refresh token grant (RFC 6749 section 6), and a service's exchange of the sign-in's
  token for its API's (GitHub's token for a Copilot token).
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_plugin_auth.services import Service

TIMEOUT = 30.0
BROWSER_WAIT = 300.0
"""How long the loopback redirect waits for the browser."""


class SignInError(Exception):
    """A sign-in that cannot go on, in one line that says what to do. ``temporary``: the
    service or the network failed for now (try again later); otherwise the sign-in itself
    was refused (sign in again)."""

    def __init__(self, message: str, *, temporary: bool = False) -> None:
        super().__init__(message)
        self.temporary = temporary


_REFUSALS = frozenset(
    {"invalid_grant", "invalid_client", "unauthorized_client", "access_denied", "expired_token"}
)
"""Errors that end a sign-in; any other (``temporarily_unavailable``, a 5xx) is for now."""


def _network_errors() -> tuple[type[BaseException], ...]:
    """What the HTTP clients raise for a dropped or refused connection: httpx's, and
    httpx2's (which Authlib uses when it is installed)."""
    import httpx
    from authlib.integrations.httpx_client._compat import httpx2

    return (httpx.HTTPError, httpx2.HTTPError)


@contextlib.contextmanager
def asking(service: Service, what: str) -> Iterator[None]:
    """Turn what a token request can raise into a one-line :class:`SignInError`."""
    from authlib.integrations.base_client import OAuthError

    try:
        yield
    except OAuthError as error:
        raise _failure(service, error) from None
    except _network_errors() as error:
        raise SignInError(
            f"cannot reach {service.label} {what}: {type(error).__name__}", temporary=True
        ) from None
    except (ValueError, KeyError, TypeError):
        raise SignInError(
            f"{service.label} answered {what} with something that is not a token",
            temporary=True,
        ) from None


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str | None
    expires_at: float | None
    """Epoch seconds; None when the service does not say."""
    scope: str | None = None
    id_token: str | None = None
    """OpenID Connect's identity token, when the service sends one (Codex's names the
    ChatGPT account its API wants to be told of)."""

    @classmethod
    def of(cls, token: dict[str, Any]) -> Tokens:
        expires_in = token.get("expires_in")
        expires_at = token.get("expires_at")
        if expires_at is None and isinstance(expires_in, (int, float)):
            expires_at = time.time() + float(expires_in)
        return cls(
            access_token=str(token["access_token"]),
            refresh_token=token.get("refresh_token"),
            expires_at=float(expires_at) if expires_at is not None else None,
            scope=token.get("scope"),
            id_token=token.get("id_token"),
        )


def _client(service: Service, redirect_uri: str | None = None) -> Any:
    from authlib.integrations.httpx_client import OAuth2Client

    return OAuth2Client(
        client_id=service.client_id,
        token_endpoint_auth_method="none",  # public clients: the id in the body, no secret
        scope=service.scope,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        timeout=TIMEOUT,
        headers={"Accept": "application/json"},
    )


def _failure(service: Service, error: Any) -> SignInError:
    code = getattr(error, "error", None) or type(error).__name__
    said = getattr(error, "description", None) or ""
    temporary = code not in _REFUSALS
    if code == "access_denied":
        return SignInError(f"the sign-in to {service.label} was refused (access_denied)")
    if code == "expired_token":
        return SignInError(
            f"the code expired before it was approved (expired_token): run hermes login "
            f"{service.name} again"
        )
    detail = f": {said}" if said else ""
    if temporary:
        return SignInError(f"{service.label} could not answer ({code}{detail})", temporary=True)
    return SignInError(f"{service.label} refused the sign-in ({code}{detail})")


def qr_code(address: str) -> str:
    """``address`` as a QR code in block characters, for a phone's camera (two rows of
    modules per line of text)."""
    import io

    import segno

    out = io.StringIO()
    segno.make(address, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue().rstrip("\n")


def device_flow(
    service: Service,
    issuer: str,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    show_qr: bool = False,
) -> Tokens:
    import httpx
    from authlib.common.security import generate_token
    from authlib.integrations.base_client import OAuthError
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    network = _network_errors()
    form = {"client_id": service.client_id, "scope": service.scope}
    verifier = generate_token(48) if service.device_pkce else None
    if verifier:
        form |= {"code_challenge": create_s256_code_challenge(verifier)}
        form |= {"code_challenge_method": "S256"}
    try:
        answer = httpx.post(
            issuer.rstrip("/") + service.device_path,
            data=form,
            headers={"Accept": "application/json"},
            timeout=TIMEOUT,
        )
        grant = answer.json()
    except (httpx.HTTPError, ValueError) as error:
        raise SignInError(
            f"cannot reach {service.label}'s sign-in at {issuer}: {type(error).__name__}",
            temporary=True,
        ) from None
    if answer.status_code >= 400 or "device_code" not in grant:
        raise _failure(service, _Said(grant))
    where = grant.get("verification_uri_complete") or grant.get("verification_uri")
    say(f"Open {where} and enter the code {grant.get('user_code')}")
    if show_qr and where:
        say(qr_code(str(where)))
    interval = float(grant.get("interval") or 5)
    deadline = time.monotonic() + float(grant.get("expires_in") or 900)
    extra = {"code_verifier": verifier} if verifier else {}
    with _client(service) as client:
        while True:
            sleep(interval)
            try:
                token = client.fetch_token(
                    issuer.rstrip("/") + service.token_path,
                    grant_type="urn:ietf:params:oauth:grant-type:device_code",
                    device_code=grant["device_code"],
                    **extra,
                )
            except OAuthError as error:
                waiting = error.error in ("authorization_pending", "slow_down")
                if waiting and time.monotonic() >= deadline:  # the code is past its life
                    raise _failure(service, _Said({"error": "expired_token"})) from None
                if error.error == "slow_down":
                    interval += 5  # RFC 8628 section 3.5
                if waiting:
                    continue
                raise _failure(service, error) from None
            except network as error:
                raise SignInError(
                    f"the sign-in to {service.label} dropped: {type(error).__name__}",
                    temporary=True,
                ) from None
            with asking(service, "the sign-in"):
                return Tokens.of(dict(token))


class _Said:
    """An error answer read as Authlib's errors are."""

    def __init__(self, body: Any) -> None:
        body = body if isinstance(body, dict) else {}
        self.error = body.get("error") or "invalid_response"
        self.description = body.get("error_description")


def pkce_flow(
    service: Service,
    issuer: str,
    say: Callable[[str], None],
    pasted: Callable[[], str] | None,
) -> Tokens:
    """Sign in in a browser; ``pasted`` (no browser here) reads back the address the browser
    was sent to."""
    from authlib.common.security import generate_token

    verifier = generate_token(48)
    state = generate_token(30)
    catcher = None
    if pasted is None:
        catcher = _Redirect(service.redirect_port, service.redirect_path, state)
    port = catcher.port if catcher is not None else (service.redirect_port or 1455)
    redirect_uri = f"http://localhost:{port}{service.redirect_path}"
    with _client(service, redirect_uri) as client:
        url, _state = client.create_authorization_url(
            issuer.rstrip("/") + service.authorize_path,
            state=state,
            code_verifier=verifier,
            **service.authorize_params,
        )
        if catcher is None:
            assert pasted is not None
            say(f"Open this address in a browser and sign in:\n  {url}")
            say("Then paste the address the browser was sent to (it may show an error page):")
            back = pasted().strip()
        else:
            say(f"Opening a browser to sign in to {service.label}; if none opens, go to:\n  {url}")
            webbrowser.open(url)
            back = catcher.wait(BROWSER_WAIT)
        query = parse_qs(urlsplit(back).query)
        if "error" in query:
            raise _failure(service, _Said({"error": query["error"][0]}))
        if query.get("state", [""])[0] != state:
            raise SignInError("the address pasted back is not this sign-in's (its state differs)")
        code = query.get("code", [""])[0]
        if not code:
            raise SignInError("the address pasted back carries no code: paste the whole address")
        with asking(service, "the sign-in"):
            token = client.fetch_token(
                issuer.rstrip("/") + service.token_path, code=code, code_verifier=verifier
            )
            return Tokens.of(dict(token))


class _Redirect:
    """The loopback server the browser is sent back to with the code."""

    def __init__(self, port: int, path: str, state: str) -> None:
        caught: list[str] = []
        self._caught = caught
        self._arrived = threading.Event()
        arrived = self._arrived

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass  # the address carries the code

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                said = parse_qs(url.query).get("state", [""])[0]
                if url.path != path or said != state:  # not this sign-in's: keep waiting
                    self.send_error(404)
                    return
                caught.append(self.path)
                body = b"Signed in: you can close this page and go back to Hermes.\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                arrived.set()

        try:
            self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as error:
            raise SignInError(
                f"port {port} on this machine is taken ({error.strerror}); close what holds "
                "it, or sign in with --no-browser"
            ) from None
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def wait(self, seconds: float) -> str:
        try:
            if not self._arrived.wait(seconds):
                raise SignInError(
                    f"no answer from the browser within {seconds:g} s: sign in with --no-browser"
                )
            return self._caught[0]
        finally:
            self._server.shutdown()
            self._server.server_close()


def refresh(service: Service, issuer: str, refresh_token: str) -> Tokens:
    headers = {service.refresh_header: refresh_token} if service.refresh_header else None
    with _client(service) as client, asking(service, "to renew the sign-in"):
        token = client.refresh_token(
            issuer.rstrip("/") + service.token_path,
            refresh_token=refresh_token,
            headers=headers,
        )
        fresh = Tokens.of(dict(token))
    if fresh.refresh_token is None:  # a service that keeps the refresh token as it was
        fresh = Tokens(
            fresh.access_token, refresh_token, fresh.expires_at, fresh.scope, fresh.id_token
        )
    return fresh


def exchange(service: Service, issuer: str, access_token: str) -> tuple[str, float, str | None]:
    """The model API's token for the sign-in's: (token, expires at, the API's base URL if
    the service names one)."""
    import httpx

    try:
        answer = httpx.get(
            service.exchange_url(issuer),
            headers={"Authorization": f"token {access_token}", **service.headers},
            timeout=TIMEOUT,
        )
    except httpx.HTTPError as error:
        raise SignInError(
            f"cannot reach {service.label} for its token: {type(error).__name__}", temporary=True
        ) from None
    if answer.status_code == 429 or answer.status_code >= 500:
        raise SignInError(
            f"{service.label} could not give its token now (HTTP {answer.status_code})",
            temporary=True,
        )
    if answer.status_code in (401, 403, 404):
        raise SignInError(
            f"{service.label} gives this account no token (HTTP {answer.status_code}): is the "
            "subscription active?"
        )
    try:
        data = answer.json()
        token = str(data["token"])
        expires_at = float(data.get("expires_at") or time.time() + 1800)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise SignInError(
            f"{service.label} answered its token request oddly", temporary=True
        ) from None
    api = (data.get("endpoints") or {}).get("api")
    return token, expires_at, str(api) if api else None


def jwt_claims(token: str) -> dict[str, Any]:
    """A JWT's claims (not verified: only to read what the service says of the account)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def chatgpt_account(tokens: Tokens) -> str | None:
    """The ChatGPT account a Codex sign-in is for (its id token's, else its access
    token's ``https://api.openai.com/auth`` claim)."""
    for token in (tokens.id_token, tokens.access_token):
        said = jwt_claims(token or "").get("https://api.openai.com/auth")
        if isinstance(said, dict) and said.get("chatgpt_account_id"):
            return str(said["chatgpt_account_id"])
    return None


def jwt_expiry(token: str) -> float | None:
    """A JWT's ``exp`` (not verified: only to know when to renew it)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"])
    except (IndexError, ValueError, KeyError, TypeError):
        return None
