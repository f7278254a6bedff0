"""Google sign-in for Vertex AI with ``google-auth``: a service account's JSON key
(``options.credentials_file``) or Application Default Credentials (the
``GOOGLE_APPLICATION_CREDENTIALS`` variable, ``gcloud auth application-default login``, the
metadata server on Google Cloud). google-auth signs the service account's assertion, asks
for the access token and says when it expires; its calls block, so they run in a thread,
one at a time."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

from hermes_commons.text import one_line
from hermes_sdk.models import ErrorKind, ProviderError

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
FRESH_SECONDS = 60.0
"""A token younger than this that is refused is not stale: signing in again would not help."""
_NO_CREDENTIALS = (
    "no Google credentials for Vertex AI: set providers.NAME.options.credentials_file to a "
    "service account's JSON key, set GOOGLE_APPLICATION_CREDENTIALS, or run `gcloud auth "
    "application-default login`"
)


class GoogleSignIn:
    """An access token for the cloud-platform scope, renewed before it expires."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._file = options.get("credentials_file")
        self._credentials: Any = None
        self._project: str | None = None
        self._lock = threading.Lock()  # a provider may serve several event loops
        self._signed_in_at = 0.0

    async def token(self, *, renew: bool = False) -> str:
        return await asyncio.to_thread(self._token, renew)

    def _token(self, renew: bool) -> str:
        with self._lock:  # one sign-in at a time, however many turns ask
            credentials = self._credentials
            if renew or credentials is None or not credentials.valid:
                self._refresh()
            return str(self._credentials.token)

    def stale(self) -> bool:
        """Whether a refused token may have expired early (revoked, a skewed clock)."""
        return time.monotonic() - self._signed_in_at > FRESH_SECONDS

    async def project(self) -> str | None:
        if self._credentials is None:
            await self.token()
        return self._project

    def _load(self) -> None:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
        from google.oauth2 import service_account

        try:
            if self._file:
                path = str(self._file)
                load = service_account.Credentials.from_service_account_file
                credentials = load(path, scopes=SCOPES)  # type: ignore[no-untyped-call]
                project = credentials.project_id
            else:
                credentials, project = google.auth.default(scopes=SCOPES)
        except FileNotFoundError:
            raise ProviderError(
                ErrorKind.AUTH,
                f"no service account key at {self._file} (providers.NAME.options.credentials_file)",
            ) from None
        except OSError as error:
            raise ProviderError(
                ErrorKind.AUTH,
                f"cannot read the service account key {self._file}: {error.strerror} "
                "(providers.NAME.options.credentials_file)",
            ) from None
        except (DefaultCredentialsError, ValueError) as error:
            if self._file:
                raise ProviderError(
                    ErrorKind.AUTH,
                    f"{self._file} is not a service account's JSON key: {_one_line(error)}",
                ) from None
            raise ProviderError(ErrorKind.AUTH, _NO_CREDENTIALS) from None
        self._credentials, self._project = credentials, project

    def _refresh(self) -> None:
        from google.auth.exceptions import RefreshError, TransportError
        from google.auth.transport.requests import Request

        if self._credentials is None:
            self._load()
        try:
            self._credentials.refresh(Request())
            self._signed_in_at = time.monotonic()
        except RefreshError as error:
            raise ProviderError(
                ErrorKind.AUTH,
                f"Google refused the sign-in for Vertex AI: {_one_line(error)}; check the "
                "service account and its key",
            ) from None
        except TransportError as error:
            raise ProviderError(
                ErrorKind.CONNECTION,
                f"cannot reach Google's sign-in for Vertex AI: {_one_line(error)}",
            ) from None


def _one_line(error: BaseException) -> str:
    return one_line(str(error), 300) or type(error).__name__
