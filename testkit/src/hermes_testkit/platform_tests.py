"""``PlatformTests``: the conformance suite every platform adapter passes.

Subclass it in your plugin's tests. Build your adapter against a fake of your platform, and
say how a user acts on that fake and what they see::

    from hermes_testkit import PlatformTests

    class TestAcmeChat(PlatformTests):
        def make_adapter(self, context):          # context.config/secrets point at the fake
            return AcmeAdapter(context)
        def platform_context(self, home):         # a working context, or None for "unset"
            ...
        def user_says(self, user_id, text): ...   # a DM from user_id
        def seen_by(self, user_id): ...           # texts the user sees now, oldest first
        def press(self, user_id, request_id, choice): ...
        def deliver_again(self, user_id): ...     # optional: the last message, sent again

The suite runs the adapter's :meth:`run` against a recording host and checks: a DM arrives
as an :class:`~hermes_sdk.platform.Inbound` addressed to the bot; sends return ids; long
replies are split within the limit without losing text; text that looks like markup is
shown literally; edits replace text, an identical edit is not an error and a missing
message raises ``MessageGone``; buttons come back as ``ButtonPress``; a context without
credentials raises ``PlatformNotConfigured``; a message the platform delivers again (a replay
after a reconnect, a redelivery) keeps its ``message_id``, which is how the gateway answers it
exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_sdk.platform import (
    ButtonPress,
    Choice,
    Inbound,
    MessageGone,
    PlatformAdapter,
    PlatformContext,
    PlatformNotConfigured,
)

__all__ = ["PlatformTests", "RecordingHost", "adapter_running", "eventually"]

USER = "4242"


class RecordingHost:
    """A stand-in for the gateway that records what the adapter hands over. Its HTTP
    listener (for :meth:`http_route`) binds 127.0.0.1:``http_port`` (0: a free port)."""

    def __init__(self, http_port: int = 0) -> None:
        self.http_port = http_port
        self._listener: Any = None
        self.messages: list[Inbound] = []
        self.presses: list[ButtonPress] = []
        self.forwarded: list[tuple[str, str, str]] = []
        """(platform, chat id, text) handed to :meth:`forward`."""
        self.reports: list[tuple[str, str, str]] = []
        """(message id, status, detail) handed to :meth:`reported`."""

    async def receive(self, message: Inbound) -> None:
        self.messages.append(message)

    async def pressed(self, press: ButtonPress) -> str:
        self.presses.append(press)
        return "noted"

    def question_open(self, request_id: str) -> bool:
        # Every question is open until a press answers it (here, any press does).
        return all(press.request_id != request_id for press in self.presses)

    async def allows(self, user_id: str) -> bool:
        return True

    async def forward(self, platform: str, chat_id: str, text: str) -> None:
        self.forwarded.append((platform, chat_id, text))

    async def reported(self, message_id: str, status: str, detail: str = "") -> None:
        self.reports.append((message_id, status, detail))

    async def http_route(self, prefix: str, handler: Any) -> str:
        from hermes_sdk.listener import SharedListener

        if self._listener is None:
            self._listener = SharedListener("127.0.0.1", self.http_port, setting="http_port")
        url: str = await self._listener.route("test", prefix, handler)
        return url

    @property
    def listening(self) -> bool:
        """Whether the adapter has asked for an HTTP route (its listener is up)."""
        return self._listener is not None

    async def aclose(self) -> None:
        if self._listener is not None:
            await self._listener.close()


@contextlib.asynccontextmanager
async def adapter_running(
    adapter: PlatformAdapter,
    host: RecordingHost,
    ready: Callable[[], object],
    timeout: float = 20.0,
) -> AsyncIterator[RecordingHost]:
    """``adapter.run(host)`` for the block, once ``ready()`` holds; a ``run`` that ends
    first (a setting refused) raises its error here. Then stopped, and both closed."""
    task = asyncio.ensure_future(adapter.run(host))
    try:
        await eventually(lambda: ready() or task.done(), timeout)
        if task.done():
            task.result()
        yield host
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        await adapter.aclose()
        await host.aclose()


async def eventually(condition: Callable[[], Any], timeout: float = 10.0) -> Any:
    """``condition()`` once it is true (checked every 20 ms, without blocking the loop);
    AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("the adapter did not do that in time")
        await asyncio.sleep(0.02)


def _squeezed(text: str) -> str:
    return "".join(text.split())


class PlatformTests:
    """Conformance suite for :class:`~hermes_sdk.platform.PlatformAdapter` implementations."""

    user: str = USER
    """The test user's id as the platform writes it (set it where ids have a form, such as
    Matrix's ``@name:server``)."""
    http_port: int = 0
    """Where the recording host's HTTP listener binds (:meth:`PlatformHost.http_route`), for
    a platform reached over HTTP: set it to a free port your harness posts to."""

    def make_adapter(self, context: PlatformContext) -> PlatformAdapter:
        raise NotImplementedError("subclasses build their adapter from context")

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        """A context pointing at your fake; ``configured=False``: credentials left out."""
        raise NotImplementedError

    def user_says(self, user_id: str, text: str) -> None:
        """The user sends ``text`` to the bot in a private chat."""
        raise NotImplementedError

    def seen_by(self, user_id: str) -> list[str]:
        """The texts of the bot's messages in that private chat, as the user sees them."""
        raise NotImplementedError

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        """The user presses the button ``choice`` of the question ``request_id``."""
        raise NotImplementedError

    def deliver_again(self, user_id: str) -> None:
        """Optional: the platform delivers the user's last message to the bot again, as it
        does after a reconnect or when an acknowledgement was lost. Leave it unimplemented
        only if your fake cannot do that (the test that uses it then skips, saying so)."""
        raise NotImplementedError

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        """Optional: the files the bot sent in that private chat, as (name, content), for a
        platform whose adapter has ``send_file``."""
        raise NotImplementedError

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        """Optional: the user sends a file (``data``, named ``name``, of the type the app
        declares) to the bot in a private chat, with no text. Leave it unimplemented only
        for a platform that carries no files (the file tests then skip, saying so)."""
        raise NotImplementedError

    async def until_ready(self) -> None:
        """Optional: wait, without blocking the event loop, until the running adapter can be
        written to (an encrypting platform has published its device's keys)."""

    # --- harness -------------------------------------------------------------------------

    def run_with(
        self, home: Path, scenario: Callable[[PlatformAdapter, RecordingHost], Awaitable[None]]
    ) -> None:
        """Run the adapter against a recording host while ``scenario`` runs."""

        async def main() -> None:
            adapter = self.make_adapter(self.platform_context(str(home)))
            host = RecordingHost(self.http_port)
            task = asyncio.ensure_future(adapter.run(host))
            try:
                await self.until_ready()
                await scenario(adapter, host)
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                await adapter.aclose()
                await host.aclose()

        asyncio.run(main())

    async def _dm(self, host: RecordingHost, text: str) -> Inbound:
        before = len(host.messages)
        self.user_says(self.user, text)
        await eventually(lambda: len(host.messages) > before)
        return host.messages[-1]

    # --- receiving -----------------------------------------------------------------------

    def test_a_private_message_arrives(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            message = await self._dm(host, "hello there")
            assert message.text == "hello there"
            assert message.user_id == self.user
            assert message.chat.chat_type == "private"
            assert message.addressed
            assert message.message_id

        self.run_with(tmp_path, scenario)

    def test_messages_arrive_once_and_in_order(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            for number in range(5):
                self.user_says(self.user, f"message {number}")
            await eventually(lambda: len(host.messages) >= 5)
            await asyncio.sleep(0.3)
            assert [m.text for m in host.messages] == [f"message {n}" for n in range(5)]

        self.run_with(tmp_path, scenario)

    def test_a_message_delivered_again_keeps_its_id(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            first = await self._dm(host, "only once, please")
            try:
                self.deliver_again(self.user)
            except NotImplementedError:
                pytest.skip(
                    "this test peer cannot deliver a message again on demand (deliver_again)"
                )
            # Handing it over again is allowed (the gateway drops it by its id); a new id
            # would make it a second message, and a second answer.
            with contextlib.suppress(AssertionError):
                await eventually(lambda: len(host.messages) > 1, timeout=2.0)
            for again in host.messages[1:]:
                assert (again.message_id, again.chat) == (first.message_id, first.chat)

        self.run_with(tmp_path, scenario)

    def _send_file(self, data: bytes, name: str, mime: str) -> None:
        try:
            self.user_sends_file(self.user, data, name, mime)
        except NotImplementedError:
            pytest.skip("this platform's test peer sends no files (user_sends_file)")

    def test_a_file_arrives_as_an_attachment(self, tmp_path: Path) -> None:
        document = b"%PDF-1.4\n% a small document\n"

        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            self._send_file(document, "report.pdf", "application/pdf")
            await eventually(lambda: host.messages)
            (file,) = host.messages[0].attachments
            assert (file.kind, file.mime, file.name) == (
                "document",
                "application/pdf",
                "report.pdf",
            )
            assert Path(file.path).read_bytes() == document
            assert Path(file.path).is_relative_to(tmp_path / "cache" / "media")

        self.run_with(tmp_path, scenario)

    def test_a_disguised_file_is_refused_in_one_line(self, tmp_path: Path) -> None:
        from hermes_testkit.media_files import disguised_program

        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            self._send_file(disguised_program(), "cute-cat.png", "image/png")
            refused = await eventually(
                lambda: [t for t in self.seen_by(self.user) if "cute-cat.png is refused" in t]
            )
            assert len(refused) == 1 and "\n" not in refused[0].strip()
            assert "executable" in refused[0]
            await asyncio.sleep(0.3)
            assert host.messages == [], "a refused file alone hands nothing over"

        self.run_with(tmp_path, scenario)

    def test_a_file_is_sent(self, tmp_path: Path) -> None:
        from hermes_sdk.media import MediaCache
        from hermes_testkit.audio_server import tone_wav

        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            send_file = getattr(adapter, "send_file", None)
            if send_file is None:
                pytest.skip("this adapter sends no files (send_file): the user gets a note")
            chat = (await self._dm(host, "send me something")).chat
            spoken = MediaCache.of_home(tmp_path).ingest(tone_wav(0.5), name="reply.wav")
            ids = await send_file(chat, spoken)
            assert len(ids) == 1 and ids[0]
            try:
                seen = await eventually(lambda: self.files_seen_by(self.user))
            except NotImplementedError:
                pytest.skip("this platform's test peer cannot show sent files (files_seen_by)")
            assert (seen[0][0], seen[0][1]) == ("reply.wav", tone_wav(0.5))

        self.run_with(tmp_path, scenario)

    # --- sending -------------------------------------------------------------------------

    def test_send_returns_message_ids(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            ids = await adapter.send(chat, "a reply")
            assert len(ids) == 1 and ids[0]
            assert await eventually(lambda: "a reply" in self.seen_by(self.user))

        self.run_with(tmp_path, scenario)

    def test_a_long_reply_is_split_within_the_limit(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            paragraph = ("lorem ipsum " * 40).strip()
            count = 3 * adapter.max_message_chars // len(paragraph) + 1
            text = "\n\n".join(f"{n} {paragraph}" for n in range(count))
            ids = await adapter.send(chat, text)
            assert len(ids) >= 3
            seen = await eventually(
                lambda: (
                    self.seen_by(self.user) if len(self.seen_by(self.user)) >= len(ids) else None
                )
            )
            assert all(len(t) <= adapter.max_message_chars for t in seen)
            assert _squeezed("".join(seen)) == _squeezed(text)

        self.run_with(tmp_path, scenario)

    def test_text_that_looks_like_markup_is_shown_as_written(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            literal = "if a < b && c > d: print('<b>not bold</b>') &amp;"
            await adapter.send(chat, literal)
            assert await eventually(lambda: literal in self.seen_by(self.user))

        self.run_with(tmp_path, scenario)

    def test_typing_is_accepted(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            await adapter.typing(chat)

        self.run_with(tmp_path, scenario)

    # --- editing -------------------------------------------------------------------------

    def test_edits_replace_the_text(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            if not adapter.can_edit:
                pytest.skip("this platform cannot edit messages")
            chat = (await self._dm(host, "hi")).chat
            (message_id,) = await adapter.send(chat, "draft")
            await adapter.edit(chat, message_id, "final text")
            await adapter.edit(chat, message_id, "final text")  # the same again: no error
            assert await eventually(lambda: "final text" in self.seen_by(self.user))
            assert "draft" not in self.seen_by(self.user)

        self.run_with(tmp_path, scenario)

    def test_editing_a_missing_message_raises_message_gone(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            if not adapter.can_edit:
                pytest.skip("this platform cannot edit messages")
            chat = (await self._dm(host, "hi")).chat
            with pytest.raises(MessageGone):
                await adapter.edit(chat, "987654321", "nothing there")

        self.run_with(tmp_path, scenario)

    # --- questions -----------------------------------------------------------------------

    def test_a_button_press_comes_back(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            choices = [Choice("yes", "Yes"), Choice("no", "No")]
            await adapter.ask(chat, "Proceed?", choices, "req1")
            await eventually(lambda: any("Proceed?" in t for t in self.seen_by(self.user)))
            self.press(self.user, "req1", "no")
            press = await eventually(lambda: host.presses[-1] if host.presses else None)
            assert (press.request_id, press.choice, press.user_id) == ("req1", "no", self.user)
            assert press.chat == chat

        self.run_with(tmp_path, scenario)

    # --- configuration -------------------------------------------------------------------

    def test_missing_credentials_are_a_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(PlatformNotConfigured) as raised:
            self.make_adapter(self.platform_context(str(tmp_path), configured=False))
        message = str(raised.value)
        assert message and "\n" not in message
