"""The SSRF guard: a table of URL spellings, each refused or allowed as promised, and
redirect chains through a loopback site of the tests' own."""

from __future__ import annotations

import asyncio

import pytest
from hermes_plugin_toolset_web.fetch import fetch

from hermes_commons.ssrf import Refused, SsrfGuard
from hermes_commons.ssrf_http import guarded_client

REFUSED = [
    "http://127.0.0.1/",
    "http://127.1/",
    "http://2130706433/",  # 127.0.0.1 in decimal
    "http://0x7f000001/",  # ... in hex
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",  # ... in octal
    "http://017700000001/",
    "http://127.0.0.1./",  # a trailing dot
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped IPv6
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://localhost/",  # a name that resolves to loopback
    "http://localhost./",
    "http://LOCALHOST/",
    "http://0.0.0.0/",  # unspecified
    "http://0/",
    "http://[::]/",
    "http://10.0.0.1/",  # RFC 1918
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://[fd00::1]/",  # IPv6 unique local
    "http://[fe80::1]/",  # link-local
    "http://169.254.1.1/",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://100.64.0.1/",  # carrier-grade NAT
    "http://224.0.0.1/",  # multicast
    "http://[ff02::1]/",
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://no-such-host.invalid/",  # does not resolve: refused, not let through
    "ftp://example.org/file",  # not http(s)
    "file:///etc/passwd",
    "gopher://127.0.0.1:70/",
    "http:///nohost",
]

ALLOWED_LITERALS = [
    "http://93.184.215.14/",
    "https://1.1.1.1/",
    "http://[2606:4700:4700::1111]/",
    "http://8.8.8.8:8080/path?q=1",
]


def judge(guard: SsrfGuard, url: str) -> None:
    from urllib.parse import urlsplit

    guard.check_url(url)
    parts = urlsplit(url)
    assert parts.hostname is not None
    guard.addresses(parts.hostname, parts.port or 80)


@pytest.mark.parametrize("url", REFUSED)
def test_refused(url: str) -> None:
    with pytest.raises(Refused) as refused:
        judge(SsrfGuard(), url)
    assert "\n" not in str(refused.value) and str(refused.value).startswith("refused")


@pytest.mark.parametrize("url", ALLOWED_LITERALS)
def test_public_addresses_pass(url: str) -> None:
    judge(SsrfGuard(), url)


def test_allow_private_hosts_opens_exactly_what_it_names() -> None:
    guard = SsrfGuard(["127.0.0.1:8080", "nas.local", "10.0.0.0/8", "[::1]:9000"])
    guard.addresses("127.0.0.1", 8080)
    guard.addresses("10.9.8.7", 443)
    guard.addresses("::1", 9000)
    for host, port in [
        ("127.0.0.1", 8081),
        ("192.168.0.1", 80),
        ("::1", 9001),
        ("localhost", 81),
    ]:
        with pytest.raises(Refused):
            guard.addresses(host, port)
    with pytest.raises(Refused, match="metadata"):
        SsrfGuard(["10.0.0.0/8"]).addresses("169.254.169.254", 80)


def run(coroutine):
    return asyncio.run(coroutine)


async def get(guard: SsrfGuard, url: str):
    async with guarded_client(guard, 5) as client:
        return await fetch(client, guard, url, 1_000_000)


def test_a_redirect_from_an_allowed_host_to_the_metadata_address_is_refused(site) -> None:
    guard = SsrfGuard([f"127.0.0.1:{site.port}"])
    target = site.url("/redirect?to=http://169.254.169.254/latest/meta-data/")
    with pytest.raises(Refused, match=r"169\.254\.169\.254"):
        run(get(guard, target))


def test_every_hop_is_judged(site) -> None:
    guard = SsrfGuard([f"127.0.0.1:{site.port}"])
    other = site.url("/article").replace("127.0.0.1", "127.0.0.2")  # loopback, not allowed
    with pytest.raises(Refused, match=r"127\.0\.0\.2"):
        run(get(guard, site.url(f"/redirect?to={other}")))
    page = run(get(guard, site.url("/redirect?to=/article")))  # an allowed hop is followed
    assert page.status == 200 and page.url.endswith("/article")
    with pytest.raises(Refused, match="only http and https"):
        run(get(guard, site.url("/redirect?to=" + site.url("/redirect?to=ftp://x/"))))


def test_a_private_address_is_refused_at_connect_time_too(site) -> None:
    guard = SsrfGuard()  # the site is loopback, and nothing is allowed
    before = len(site.server.seen)
    with pytest.raises(Refused, match="loopback"):
        run(get(guard, site.url("/article")))
    assert len(site.server.seen) == before  # no request reached it
