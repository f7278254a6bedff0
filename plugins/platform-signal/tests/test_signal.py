"""What the Signal adapter says when signal-cli is not there or not set up, in one line with
the command that fixes it; a rate limit as a refusal to retry; mentions read as names."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hermes_plugin_platform_signal.adapter import SignalAdapter
from hermes_plugin_platform_signal.reading import Me, read_envelope
from hermes_plugin_platform_signal.testing import ACCOUNT, FakeSignalCli

from hermes_sdk.platform import ChatRef, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost
from hermes_testkit.services import free_port


def _start(
    home: Path,
    daemon_url: str,
    account: str = ACCOUNT,
    raises: type[Exception] = PlatformNotConfigured,
) -> str:
    async def main() -> str:
        context = PlatformContext(
            name="signal", home=str(home), config={"daemon_url": daemon_url, "account": account}
        )
        adapter = SignalAdapter(context)
        host = RecordingHost()
        try:
            with pytest.raises(raises) as raised:
                await adapter.run(host)
            return str(raised.value)
        finally:
            await adapter.aclose()
            await host.aclose()

    return asyncio.run(main())


def test_a_daemon_not_running_is_one_line_with_the_command_to_start_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Not a setting to fix: the gateway tries again with backoff (it may start later).
    said = _start(tmp_path, f"http://127.0.0.1:{free_port()}", raises=RuntimeError)
    assert "signal-cli's daemon does not answer" in said and "\n" not in said
    assert f"signal-cli -a {ACCOUNT} daemon --http" in said and "on-connection" in said


def test_an_account_the_daemon_does_not_have_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with FakeSignalCli() as daemon:
        said = _start(tmp_path, daemon.url, "+15557770000")
    assert "signal-cli has no registered account +15557770000" in said and "\n" not in said
    assert "signal-cli -a +15557770000 register" in said


def test_a_rate_limit_is_a_refusal_with_its_wait(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with FakeSignalCli() as daemon:

        async def main() -> None:
            context = PlatformContext(
                name="signal",
                home=str(tmp_path),
                config={"daemon_url": daemon.url, "account": ACCOUNT},
            )
            adapter = SignalAdapter(context)
            try:
                daemon.rate_limits = 1
                chat = ChatRef(platform="signal", chat_id="+15551234567", chat_type="private")
                with pytest.raises(NotSent, match=r"retry after 30\.0 s") as limited:
                    await adapter.send(chat, "hello")
                assert not limited.value.permanent  # nothing went out: tried again later
                await adapter.send(chat, "hello again")
            finally:
                await adapter.aclose()

        asyncio.run(main())
        assert [s.text for s in daemon.sent] == ["hello again"]


def test_mentions_are_read_as_names_and_one_of_the_bot_addresses_it() -> None:
    me = Me(ACCOUNT)
    envelope = {
        "sourceNumber": "+15551234567",
        "sourceUuid": "uuid-1",
        "timestamp": 1700000000000,
        "dataMessage": {
            "timestamp": 1700000000000,
            "message": "\ufffc ask \ufffc about it",
            "groupInfo": {"groupId": "G1", "type": "DELIVER"},
            "mentions": [
                {"number": ACCOUNT, "start": 0, "length": 1},
                {"number": "+15550003333", "name": "Ann", "start": 6, "length": 1},
            ],
        },
    }
    said = read_envelope(envelope, me)
    assert said is not None and not isinstance(said, type(None))
    inbound = said.inbound  # type: ignore[union-attr]
    assert inbound.text == "@bot ask @+15550003333 about it"
    assert (
        inbound.addressed
        and inbound.chat.chat_type == "group"
        and inbound.chat.chat_id == "group:G1"
    )
    assert inbound.message_id == "uuid-1:1700000000000"
    envelope["dataMessage"]["mentions"] = envelope["dataMessage"]["mentions"][1:]  # type: ignore[index]
    assert not read_envelope(envelope, me).inbound.addressed  # type: ignore[union-attr]


def test_markdown_goes_out_as_signals_own_styles(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hermes_plugin_platform_signal.styles import to_signal

    with FakeSignalCli() as daemon:

        async def main() -> None:
            context = PlatformContext(
                name="signal",
                home=str(tmp_path),
                config={"daemon_url": daemon.url, "account": ACCOUNT},
            )
            adapter = SignalAdapter(context)
            chat = ChatRef(platform="signal", chat_id="+15551234567", chat_type="private")
            try:
                await adapter.send(
                    chat, "# Done 😀\n\nRan **`ls -la`** in *~/src*, ~~slowly~~.\n\n- one\n- two"
                )
            finally:
                await adapter.aclose()

        asyncio.run(main())
    [sent] = daemon.sent
    assert sent.text == "Done 😀\n\nRan ls -la in ~/src, slowly.\n\n- one\n- two"
    # Ranges count UTF-16 units: the emoji is two, and every range lands on its words.
    assert sent.styled("BOLD") == ["Done 😀", "ls -la"]
    assert sent.styled("MONOSPACE") == ["ls -la"]
    assert sent.styled("ITALIC") == ["~/src"] and sent.styled("STRIKETHROUGH") == ["slowly"]
    # What is not Markdown stays as written; a link keeps its address.
    assert to_signal("2 * 3 * 4 = 24") == ("2 * 3 * 4 = 24", [])
    assert to_signal("see [the docs](https://x.org/d)") == ("see the docs (https://x.org/d)", [])
    assert to_signal("```\nprint(1)\n```")[1] == ["0:8:MONOSPACE"]
