"""The SSRF guard: every request the web tools make goes to a public address, or to a host or
range the user opened on purpose (``web.allow_private_hosts``).

Addresses are judged after resolution, in whatever spelling the URL used (decimal, hex and
octal IPv4, IPv4-mapped IPv6, trailing dots), and the connection is made to the very address
that was judged, so a name cannot resolve to something else between the check and the
connect (DNS rebinding). A name that does not resolve is refused. Only http and https.
The operating system's firewall, not this, is the real boundary.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["Refused", "SsrfGuard", "Unresolved"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_METADATA_NAMES = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
_METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


class Refused(Exception):
    """A request the guard does not let through; the message says what and why, in one
    line, for the model."""


class Unresolved(Refused):
    """A name that does not resolve: no judgement on the host, which is simply unknown (a
    typo, no network). A caller may report it apart from the refusals that are."""


def legacy_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in the forms inet_aton accepts: 2130706433, 0x7f000001, 0177.0.0.1,
    127.1. None when ``text`` is not one."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part, 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        return None
    value = 0
    for n in leading:
        value = value * 256 + n
    value = value * 256 ** (5 - len(numbers)) + last
    return ipaddress.IPv4Address(value) if value < 2**32 else None


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is written as one, in any spelling."""
    bare = host.strip("[]").rstrip(".")
    address: IPAddress | None
    try:
        address = ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        address = legacy_ipv4(bare)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def why_private(address: IPAddress) -> str | None:
    """Why ``address`` is not public, or None when it is."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address.sixtofour is not None:
            address = address.sixtofour
    if address in _METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_loopback:
        return "loopback"
    if address.is_unspecified:
        return "unspecified"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "carrier-grade NAT (100.64.0.0/10)"
    if address.is_private or address.is_reserved or not address.is_global:
        return "private"
    return None


@dataclass(frozen=True)
class _Allowance:
    host: str | None = None
    port: int | None = None
    network: IPNetwork | None = None


def _allowances(entries: Iterable[str]) -> list[_Allowance]:
    allowed = []
    for entry in entries:
        text = entry.strip().lower()
        if "/" in text:
            allowed.append(_Allowance(network=ipaddress.ip_network(text, strict=False)))
            continue
        host, port = text, None
        if text.startswith("["):  # [::1]:8080
            host, _, rest = text[1:].partition("]")
            port = int(rest[1:]) if rest.startswith(":") else None
        elif text.count(":") == 1:
            host, _, port_text = text.partition(":")
            port = int(port_text)
        allowed.append(_Allowance(host=host.rstrip("."), port=port))
    return allowed


@dataclass
class SsrfGuard:
    """Judges a URL, and the address a connection goes to; ``allow_private_hosts`` entries
    are ``host``, ``host:port`` or a network (``10.0.0.0/8``)."""

    allow_private_hosts: Sequence[str] = ()
    _allowed: list[_Allowance] = field(init=False)

    def __post_init__(self) -> None:
        self._allowed = _allowances(self.allow_private_hosts)

    def _opened(self, host: str, port: int, address: IPAddress | None) -> bool:
        for allowance in self._allowed:
            if allowance.network is not None:
                network = allowance.network
                if (
                    address is not None
                    and address.version == network.version
                    and address in network
                ):
                    return True
                continue
            if allowance.host == host and allowance.port in (None, port):
                return True
            literal = literal_address(allowance.host or "")
            if literal is not None and address == literal and allowance.port in (None, port):
                return True
        return False

    def check_url(self, url: str) -> None:
        """Refused unless ``url`` is http(s) with a host; its addresses are judged at
        connect time (:meth:`addresses`)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise Refused(f"refused {url[:200]}: only http and https URLs are fetched")
        if not parts.hostname:
            raise Refused(f"refused {url[:200]}: the URL has no host")

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses a connection to ``host:port`` may use, each judged; Refused when
        none may (a name that does not resolve is refused too)."""
        name = host.strip("[]").rstrip(".").lower()
        literal = literal_address(name)
        if literal is not None:
            candidates: list[IPAddress] = [literal]
        else:
            metadata = name in _METADATA_NAMES or name.endswith(".internal")
            if metadata and not self._opened(name, port, None):
                raise Refused(f"refused {host}: a cloud metadata host")
            try:
                infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            except (socket.gaierror, UnicodeError) as exc:
                raise Unresolved(f"refused {host}: the name does not resolve ({exc})") from None
            candidates = []
            for info in infos:
                resolved = literal_address(str(info[4][0]))
                if resolved is not None and resolved not in candidates:
                    candidates.append(resolved)
        for address in candidates:
            reason = why_private(address)
            if reason is not None and not self._opened(name, port, address):
                # One private answer refuses the name: a rebinding name gives a mix.
                raise Refused(
                    f"refused {host}: it resolves to {address}, {reason}; allow it on purpose "
                    "with web.allow_private_hosts"
                )
        if not candidates:
            raise Refused(f"refused {host}: the name resolves to nothing")
        return [str(address) for address in candidates]
