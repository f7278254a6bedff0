"""``platforms.email`` and ``EMAIL_PASSWORD``, checked before anything connects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hermes_commons.addresses import is_loopback
from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["EmailSettings"]

Tls = Literal["implicit", "starttls", "none"]
_PORTS: dict[str, tuple[int, int]] = {
    "implicit": (993, 465),
    "starttls": (143, 587),
    "none": (143, 25),
}


def _port(config: Any, key: str, default: int) -> int:
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        raise PlatformNotConfigured(f"platforms.email.{key} must be a port number, not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class EmailSettings:
    address: str
    username: str
    password: str
    imap_host: str
    imap_port: int
    smtp_host: str
    smtp_port: int
    tls: Tls
    """For IMAP, and for SMTP unless ``smtp_tls`` says otherwise."""
    smtp_tls: Tls
    folder: str
    draft_mode: bool
    name: str
    poll_seconds: float
    max_replies_per_hour: int

    @classmethod
    def from_context(cls, context: PlatformContext) -> EmailSettings:
        config = context.config
        address = str(config.get("address") or "").strip()
        if "@" not in address:
            raise PlatformNotConfigured(
                "set platforms.email.address to the mailbox Hermes reads (hermes@example.org)"
            )
        tls = str(config.get("tls") or "implicit")
        smtp_tls = str(config.get("smtp_tls") or tls)
        for key, value in (("tls", tls), ("smtp_tls", smtp_tls)):
            if value not in _PORTS:
                raise PlatformNotConfigured(
                    f"platforms.email.{key} must be implicit, starttls or none, not {value!r}"
                )
        imap_host = str(config.get("imap_host") or "").strip()
        smtp_host = str(config.get("smtp_host") or "").strip()
        if not imap_host or not smtp_host:
            raise PlatformNotConfigured(
                "set platforms.email.imap_host and smtp_host (your provider's mail servers)"
            )
        for host, plain in ((imap_host, tls == "none"), (smtp_host, smtp_tls == "none")):
            if plain and not is_loopback(host):
                raise PlatformNotConfigured(
                    f"platforms.email.tls: none would send the password in the clear to "
                    f"{host}; it is allowed only for servers on this machine (127.0.0.1)"
                )
        password = context.secrets.get("EMAIL_PASSWORD", "")
        if not password:
            raise PlatformNotConfigured(
                "set EMAIL_PASSWORD in HERMES_HOME/.env (an app password works)"
            )
        imap_default, smtp_default = _PORTS[tls][0], _PORTS[smtp_tls][1]
        cap = config.get("max_replies_per_hour", 10)
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise PlatformNotConfigured(
                f"platforms.email.max_replies_per_hour must be a whole number of at least 1, "
                f"not {cap!r}"
            )
        return cls(
            address=address,
            username=str(config.get("username") or address),
            password=password,
            imap_host=imap_host,
            imap_port=_port(config, "imap_port", imap_default),
            smtp_host=smtp_host,
            smtp_port=_port(config, "smtp_port", smtp_default),
            tls=tls,  # type: ignore[arg-type]  # checked above
            smtp_tls=smtp_tls,  # type: ignore[arg-type]
            folder=str(config.get("folder") or "INBOX"),
            draft_mode=config.get("draft_mode") is True,
            name=str(config.get("name") or "Hermes"),
            poll_seconds=float(config.get("poll_seconds") or 60),
            max_replies_per_hour=cap,
        )
