"""``platforms.matrix`` and the secrets beside it, checked before anything connects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["TRUST_LEVELS", "MatrixSettings"]

TRUST_LEVELS = ("cross-signed", "any")
"""``cross-signed``: devices their owner cross-signed (the owner trusted on first use);
``any``: every device of an allowed user."""

_USER_ID = re.compile(r"^@[^:\s]+:[^\s]+$")


@dataclass(frozen=True, slots=True)
class MatrixSettings:
    homeserver: str
    user_id: str
    """The bot's full id (``@hermes:example.org``); '' to learn it from the access token."""
    access_token: str
    password: str
    require_mention: bool
    device_name: str
    encryption: bool
    """Read and answer end-to-end encrypted rooms (mautrix's crypto, python-olm)."""
    trust: str
    """Whose devices are read and given room keys: ``cross-signed`` or ``any``."""

    @classmethod
    def from_context(cls, context: PlatformContext) -> MatrixSettings:
        config = context.config
        homeserver = str(config.get("homeserver") or "").strip().rstrip("/")
        if not homeserver:
            raise PlatformNotConfigured(
                "set platforms.matrix.homeserver to your homeserver's URL (https://matrix.org)"
            )
        if urlsplit(homeserver).scheme not in {"http", "https"} or not urlsplit(homeserver).netloc:
            raise PlatformNotConfigured(
                f"platforms.matrix.homeserver must be an http(s) URL, not {homeserver!r}"
            )
        user_id = str(config.get("user_id") or "").strip()
        if user_id and not _USER_ID.match(user_id):
            raise PlatformNotConfigured(
                f"platforms.matrix.user_id must be a full Matrix id like @hermes:example.org, "
                f"not {user_id!r}"
            )
        token = context.secrets.get("MATRIX_ACCESS_TOKEN", "").strip()
        password = context.secrets.get("MATRIX_PASSWORD", "")
        if not token and not password:
            raise PlatformNotConfigured(
                "set MATRIX_ACCESS_TOKEN (or MATRIX_PASSWORD, with platforms.matrix.user_id) "
                "in HERMES_HOME/.env"
            )
        if not token and not user_id:
            raise PlatformNotConfigured(
                "MATRIX_PASSWORD needs platforms.matrix.user_id (the bot's @name:server) to log in"
            )
        trust = str(config.get("trust") or "cross-signed").strip()
        if trust not in TRUST_LEVELS:
            raise PlatformNotConfigured(
                f"platforms.matrix.trust must be one of {', '.join(TRUST_LEVELS)}, not {trust!r}"
            )
        encryption = config.get("encryption", True)
        if not isinstance(encryption, bool):
            raise PlatformNotConfigured(
                f"platforms.matrix.encryption must be true or false, not {encryption!r}"
            )
        return cls(
            homeserver=homeserver,
            user_id=user_id,
            access_token=token,
            password=password,
            require_mention=config.get("require_mention", True) is not False,
            device_name=str(config.get("device_name") or "Hermes"),
            encryption=encryption,
            trust=trust,
        )
