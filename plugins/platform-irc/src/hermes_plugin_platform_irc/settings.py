"""``platforms.irc`` and the secrets beside it (hermes-agent's names: IRC_SERVER, IRC_PORT,
IRC_NICKNAME, IRC_CHANNEL, IRC_USE_TLS, IRC_SERVER_PASSWORD, IRC_NICKSERV_PASSWORD),
checked before anything connects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured

__all__ = ["FloodRules", "IrcSettings", "SaslLogin"]

TlsMode = Literal["none", "tls", "starttls"]
_NICK = re.compile(r"^[A-Za-z\[\]\\`^{}|_][A-Za-z0-9\[\]\\`^{}|_-]{0,29}$")
_CHANNEL = re.compile(r"^[#&+!][^\s,\x07]{1,49}$")
_TRUE = {"1", "true", "yes", "on"}
BURST, SECONDS_PER_LINE = 4, 1.5


@dataclass(frozen=True, slots=True)
class SaslLogin:
    username: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class FloodRules:
    """How fast lines go out: ``burst`` at once, then one every ``seconds_per_line``
    (what InspIRCd's and Solanum's default penalties allow with room to spare)."""

    burst: int = BURST
    seconds_per_line: float = SECONDS_PER_LINE


@dataclass(frozen=True, slots=True)
class IrcSettings:
    server: str
    port: int
    tls: TlsMode
    tls_verify: bool
    """Check the server's certificate (off only for a server on your own network with a
    self-signed one; ``ca_file`` is the better fix)."""
    ca_file: str | None
    nick: str
    username: str
    realname: str
    channels: tuple[str, ...]
    server_password: str | None = field(repr=False)
    sasl: SaslLogin | None
    nickserv_password: str | None = field(repr=False)
    require_mention: bool
    """In a channel: answer only a message that names the bot."""
    identity: Literal["nick", "account"]
    """Who a sender is: their nick, or (``account``) the services account the server
    vouches for (IRCv3 account-tag); unidentified senders are then not heard."""
    flood: FloodRules

    @classmethod
    def from_context(cls, context: PlatformContext) -> IrcSettings:
        config, secrets = context.config, context.secrets
        server = str(config.get("server") or secrets.get("IRC_SERVER") or "").strip()
        if not server or any(c.isspace() for c in server) or "/" in server:
            raise PlatformNotConfigured(
                "set platforms.irc.server (or IRC_SERVER) to the IRC server's host name, as "
                "irc.libera.chat"
            )
        tls = _tls(config, secrets)
        port = _port(config.get("port") or secrets.get("IRC_PORT"), tls)
        nick = str(config.get("nick") or secrets.get("IRC_NICKNAME") or "hermes-bot").strip()
        if not _NICK.match(nick):
            raise PlatformNotConfigured(
                f"platforms.irc.nick {nick!r} is not an IRC nick: letters, digits and "
                "[]\\`^{}|_- , starting with a letter, at most 30"
            )
        sasl = _sasl(config.get("sasl"), secrets, nick)
        if sasl is not None and tls == "none" and not _loopback(server):
            raise PlatformNotConfigured(
                "platforms.irc.sasl sends the password in the clear without TLS: set "
                "platforms.irc.tls to tls (port 6697) or starttls"
            )
        for variable in ("IRC_SERVER_PASSWORD", "IRC_SASL_PASSWORD", "IRC_NICKSERV_PASSWORD"):
            if any(c in secrets.get(variable, "") for c in "\r\n\0"):
                raise PlatformNotConfigured(f"{variable} holds a line break: write it on one line")
        return cls(
            server=server,
            port=port,
            tls=tls,
            tls_verify=config.get("tls_verify", True) is not False,
            ca_file=_ca_file(config.get("ca_file")),
            nick=nick,
            username=_username(config.get("username"), nick),
            realname=str(config.get("realname") or "Hermes agent"),
            channels=_channels(config, secrets),
            server_password=_server_password(config, secrets),
            sasl=sasl,
            nickserv_password=secrets.get("IRC_NICKSERV_PASSWORD", "").strip() or None,
            require_mention=config.get("require_mention", True) is not False,
            identity=_identity(config.get("identity")),
            flood=_flood(config.get("flood")),
        )


def _username(raw: object, nick: str) -> str:
    """The ident part of our address: servers take letters and digits safely, ten at most."""
    name = "".join(c for c in str(raw or nick).lower() if c.isascii() and c.isalnum())
    return name[:10] or "hermes"


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _tls(config: Mapping[str, Any], secrets: Mapping[str, str]) -> TlsMode:
    raw = config.get("tls")
    if raw is None and secrets.get("IRC_USE_TLS"):
        raw = "tls" if secrets["IRC_USE_TLS"].strip().lower() in _TRUE else "none"
    if raw is None or raw is True:
        return "tls"
    if raw is False:
        return "none"
    modes: dict[object, TlsMode] = {"none": "none", "tls": "tls", "starttls": "starttls"}
    if isinstance(raw, str) and raw in modes:
        return modes[raw]
    raise PlatformNotConfigured(
        f"platforms.irc.tls is none, tls or starttls, not {raw!r} (tls: port 6697; "
        "starttls: upgrade on port 6667)"
    )


def _port(raw: object, tls: TlsMode) -> int:
    if raw is None or raw == "":
        return 6697 if tls == "tls" else 6667
    try:
        port = int(str(raw))
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise PlatformNotConfigured(f"platforms.irc.port is a port number, not {raw!r}")
    return port


def _channels(config: Mapping[str, Any], secrets: Mapping[str, str]) -> tuple[str, ...]:
    raw = config.get("channels")
    if raw is None:
        raw = config.get("channel") or secrets.get("IRC_CHANNEL") or []
    if isinstance(raw, str):
        raw = [part for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list | tuple):
        raise PlatformNotConfigured(
            f"platforms.irc.channels is a list, as ['#hermes'], not {raw!r}"
        )
    channels = []
    for item in raw:
        name = str(item).strip()
        if not _CHANNEL.match(name):
            raise PlatformNotConfigured(
                f"platforms.irc.channels: {name!r} is not a channel name; quote it in YAML, "
                "as '#hermes' (an unquoted # starts a comment)"
            )
        channels.append(name)
    return tuple(channels)


def _server_password(config: Mapping[str, Any], secrets: Mapping[str, str]) -> str | None:
    if config.get("password"):
        raise PlatformNotConfigured(
            "platforms.irc.password belongs in HERMES_HOME/.env as IRC_SERVER_PASSWORD, not "
            "in config.yaml"
        )
    return secrets.get("IRC_SERVER_PASSWORD", "").strip() or None


def _ca_file(raw: object) -> str | None:
    if not raw:
        return None
    path = Path(str(raw)).expanduser()
    if not path.is_file():
        raise PlatformNotConfigured(
            f"platforms.irc.ca_file {str(raw)!r} is not a file: give the path of the PEM file "
            "of the CA that signed the server's certificate"
        )
    return str(path)


def _sasl(raw: object, secrets: Mapping[str, str], nick: str) -> SaslLogin | None:
    """``sasl: true`` (IRC_SASL_USERNAME, default the nick, and IRC_SASL_PASSWORD) or
    ``sasl: {username: NAME}`` with the password in IRC_SASL_PASSWORD."""
    if raw in (None, False):
        return None
    username = secrets.get("IRC_SASL_USERNAME", "").strip() or nick
    if isinstance(raw, Mapping):
        username = str(raw.get("username") or username)
        if raw.get("password"):
            raise PlatformNotConfigured(
                "platforms.irc.sasl.password belongs in HERMES_HOME/.env as IRC_SASL_PASSWORD, "
                "not in config.yaml"
            )
    elif raw is not True:
        raise PlatformNotConfigured(
            f"platforms.irc.sasl is true or {{username: NAME}}, not {raw!r}"
        )
    password = secrets.get("IRC_SASL_PASSWORD", "").strip()
    if not password:
        raise PlatformNotConfigured(
            "platforms.irc.sasl is on: set IRC_SASL_PASSWORD in HERMES_HOME/.env to the "
            "services account's password"
        )
    return SaslLogin(username=username, password=password)


def _identity(raw: object) -> Literal["nick", "account"]:
    if raw in (None, "nick"):
        return "nick"
    if raw == "account":
        return "account"
    raise PlatformNotConfigured(f"platforms.irc.identity is nick or account, not {raw!r}")


def _flood(raw: object) -> FloodRules:
    if raw is None:
        return FloodRules()
    if not isinstance(raw, Mapping):
        raise PlatformNotConfigured(
            f"platforms.irc.flood is {{burst: 4, seconds_per_line: 1.5}}, not {raw!r}"
        )
    burst = raw.get("burst", BURST)
    pace = raw.get("seconds_per_line", SECONDS_PER_LINE)
    if isinstance(burst, bool) or not isinstance(burst, int) or not 1 <= burst <= 20:
        raise PlatformNotConfigured(f"platforms.irc.flood.burst is 1 to 20 lines, not {burst!r}")
    if isinstance(pace, bool) or not isinstance(pace, int | float) or not 0 <= pace <= 10:
        raise PlatformNotConfigured(
            f"platforms.irc.flood.seconds_per_line is 0 to 10, not {pace!r}"
        )
    return FloodRules(burst=burst, seconds_per_line=float(pace))
