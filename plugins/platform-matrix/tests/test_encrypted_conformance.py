"""The Matrix adapter passes the platform conformance suite in an end-to-end encrypted room,
against a real Synapse, the person writing from a device that encrypts (mautrix's Olm
machine, cross-signed by its owner): every message, edit and file the bot sends is
``m.room.encrypted`` on the server, and what the person sends is read through its keys."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from hermes_plugin_platform_matrix.adapter import MatrixAdapter
from hermes_plugin_platform_matrix.testing import EncryptingDevice, MatrixUser, Synapse

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestEncryptedMatrixConformance(PlatformTests):
    @pytest.fixture(autouse=True)
    def accounts(self, synapse: Synapse) -> Iterator[None]:
        self.server = synapse
        self.bot = synapse.register()
        self.person = synapse.register()
        self.user = self.person.user_id
        self.phone = self.person.new_device()
        self.room = self.person.create_room([self.bot.user_id], encrypted=True)
        self.bot.join(self.room)
        yield
        self.phone.close()
        sent = [
            e
            for e in self.person.raw_events(self.room)
            if e["sender"] == self.bot.user_id and "state_key" not in e
        ]
        assert {e["type"] for e in sent} <= {"m.room.encrypted"}, "the server saw plaintext"

    def make_adapter(self, context: PlatformContext) -> MatrixAdapter:
        return MatrixAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return PlatformContext(
            name="matrix",
            home=home,
            config={"homeserver": self.server.url},
            secrets={"MATRIX_ACCESS_TOKEN": self.bot.token} if configured else {},
        )

    async def until_ready(self) -> None:
        """The bot's keys published: its device can be sent to."""
        deadline = time.monotonic() + 30
        while not await asyncio.to_thread(self.person.published_keys, self.bot.user_id):
            assert time.monotonic() < deadline, "the bot never published its device's keys"
            await asyncio.sleep(0.1)

    def _device(self, user_id: str) -> EncryptingDevice:
        assert user_id == self.person.user_id
        return self.phone

    def _person(self, user_id: str) -> MatrixUser:
        assert user_id == self.person.user_id
        return self.person

    def user_says(self, user_id: str, text: str) -> None:
        self._device(user_id).say(self.room, text)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self._device(user_id).send_file(self.room, data, name, mime)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        device = self._device(user_id)
        sent = [c for c in device.seen(self.room, self.bot.user_id) if c.get("file")]
        return [(str(c.get("filename") or c["body"]), device.download(c["file"])) for c in sent]

    def seen_by(self, user_id: str) -> list[str]:
        device = self._device(user_id)
        return [str(c.get("body")) for c in device.seen(self.room, self.bot.user_id)]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        self._device(user_id).say(self.room, choice)
