"""The Matrix adapter passes the platform conformance suite against a real Synapse."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_matrix.adapter import MatrixAdapter
from hermes_plugin_platform_matrix.testing import MatrixUser, Synapse

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestMatrixConformance(PlatformTests):
    @pytest.fixture(autouse=True)
    def accounts(self, synapse: Synapse) -> Iterator[None]:
        self.server = synapse
        self.bot = synapse.register()
        self.person = synapse.register()
        self.user = self.person.user_id
        self.room = self.person.create_room([self.bot.user_id])
        self.bot.join(self.room)
        yield

    def make_adapter(self, context: PlatformContext) -> MatrixAdapter:
        return MatrixAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return PlatformContext(
            name="matrix",
            home=home,
            config={"homeserver": self.server.url},
            secrets={"MATRIX_ACCESS_TOKEN": self.bot.token} if configured else {},
        )

    def _person(self, user_id: str) -> MatrixUser:
        assert user_id == self.person.user_id
        return self.person

    def user_says(self, user_id: str, text: str) -> None:
        self._person(user_id).say(self.room, text)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self._person(user_id).send_file(self.room, data, name, mime)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        person = self._person(user_id)
        sent = [c for c in person.seen(self.room, self.bot.user_id) if c.get("url")]
        return [(str(c.get("filename") or c["body"]), person.download(c["url"])) for c in sent]

    def seen_by(self, user_id: str) -> list[str]:
        return [str(c.get("body")) for c in self._person(user_id).seen(self.room, self.bot.user_id)]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        self._person(user_id).say(self.room, choice)
