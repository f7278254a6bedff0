"""The IRC adapter passes the platform conformance suite against a real IRC server
(Debian's ngircd), with a raw IRC client playing the user."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_irc.adapter import IrcAdapter
from hermes_plugin_platform_irc.testing import IrcServer, IrcUser, fresh

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.platform_tests import eventually


class TestIrcConformance(PlatformTests):
    @pytest.fixture(autouse=True)
    def people(self, irc_server: IrcServer) -> Iterator[None]:
        self.server = irc_server
        self.bot_nick = fresh("hermes")
        self.user = fresh("user")  # nicks are freed a moment after a QUIT
        self.person: IrcUser = irc_server.user(self.user)
        yield
        self.person.quit()

    def make_adapter(self, context: PlatformContext) -> IrcAdapter:
        self.adapter = IrcAdapter(context)
        return self.adapter

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {
            "server": "127.0.0.1",
            "port": self.server.port,
            "tls": "none",
            "nick": self.bot_nick,
        }
        return PlatformContext(name="irc", home=home, config=config if configured else {})

    async def until_ready(self) -> None:
        await eventually(lambda: self.adapter.connected)

    def user_says(self, user_id: str, text: str) -> None:
        self.person.say(self.bot_nick, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [h.text for h in self.person.heard_from(self.bot_nick, target=self.user)]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        self.person.say(self.bot_nick, choice)  # a typed choice: IRC has no buttons
