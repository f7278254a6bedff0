"""A real IRC server (ngircd) on loopback, a raw client playing a person and a real bouncer
(ZNC), for tests: the ``irc_server`` fixture, :class:`IrcServer`, :class:`IrcUser`,
:func:`znc_bouncer`."""

from hermes_plugin_platform_irc.testing.bouncer import Bouncer, znc_bouncer
from hermes_plugin_platform_irc.testing.server import (
    Heard,
    IrcServer,
    IrcUser,
    fresh,
    irc_server,
    irc_server_fixture,
)
from hermes_plugin_platform_irc.testing.strict import inspircd_server

__all__ = [
    "Bouncer",
    "Heard",
    "IrcServer",
    "IrcUser",
    "fresh",
    "inspircd_server",
    "irc_server",
    "irc_server_fixture",
    "znc_bouncer",
]
