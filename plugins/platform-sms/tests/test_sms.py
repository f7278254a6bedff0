"""What the SMS adapter refuses and how it says it (unsigned or wrongly signed webhooks, a
number that texted STOP, Twilio's refusals), what carriers require of it (STOP, START,
HELP, without a model), MMS both ways, and texts read back after the gateway was away."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_sms.adapter import SmsAdapter
from hermes_plugin_platform_sms.testing import ACCOUNT_SID, AUTH_TOKEN, NUMBER, FakeTwilio

from hermes_commons.sending import PartlySent
from hermes_sdk.media import MediaCache
from hermes_sdk.platform import ChatRef, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.media_files import disguised_program, photo_bytes
from hermes_testkit.platform_tests import RecordingHost
from hermes_testkit.services import free_port

USER = "+15551234567"
CHAT = ChatRef(platform="sms", chat_id=USER, chat_type="private")
SECRETS = {
    "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
    "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
    "TWILIO_PHONE_NUMBER": NUMBER,
}
Scenario = Callable[[SmsAdapter, RecordingHost, FakeTwilio], Awaitable[None]]


@pytest.fixture
def twilio() -> Iterator[FakeTwilio]:
    with FakeTwilio() as fake:
        yield fake


async def _until(condition: Callable[[], object], seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not in time")


def _run(
    home: Path,
    twilio: FakeTwilio,
    scenario: Scenario,
    port: int = 0,
    query: str = "",
    **config: object,
) -> None:
    port = port or free_port()
    twilio.webhook_url = f"http://127.0.0.1:{port}/sms/webhook{query}"

    async def main() -> None:
        context = PlatformContext(
            name="sms",
            home=str(home),
            config={"api_url": twilio.api_url, "webhook_url": twilio.webhook_url, **config},
            secrets={**SECRETS, "TWILIO_WEBHOOK_SIGNING_SECRET": "kit-signing-key-secret"},
        )
        adapter = SmsAdapter(context)
        host = RecordingHost(port)
        task = asyncio.ensure_future(adapter.run(host))
        try:
            await _until(lambda: adapter.listening_url)
            await scenario(adapter, host, twilio)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await adapter.aclose()
            await host.aclose()

    asyncio.run(main())


def test_unsigned_forged_or_stale_webhooks_get_401_and_hand_nothing_over(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        url = str(twilio.webhook_url)
        params = {"From": USER, "To": NUMBER, "Body": "hi", "MessageSid": "SM" + "f" * 32}
        answers = await asyncio.to_thread(
            lambda: [
                twilio.post(params, None)[0],  # missing
                twilio.post(params, twilio.sign(url, params, "another-token"))[0],  # forged
                twilio.post(params, twilio.sign(url, params, "the-token-before-rotation"))[0],
                twilio.post(params, twilio.sign(url + "?x=1", params))[0],  # another address
                twilio.post({**params, "Body": "changed"}, twilio.sign(url, params))[0],
            ]
        )
        assert answers == [401, 401, 401, 401, 401]
        status, body = await asyncio.to_thread(twilio.post, params, twilio.sign(url, params))
        assert status == 200 and body.endswith("<Response></Response>")
        assert [m.text for m in host.messages] == ["hi"]

    _run(tmp_path, twilio, scenario)


def test_stop_start_and_help_are_honoured_without_the_model(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        twilio.user_texts(USER, "HELP")
        await _until(lambda: twilio.webhook_answers)
        status, twiml = twilio.webhook_answers[0]
        assert status == 200 and "<Message>This number is Hermes" in twiml
        twilio.user_texts(USER, "Yes")  # not opted out: a plain message, not a keyword
        twilio.user_texts(USER, "End.")  # not a keyword to Twilio either (punctuation)
        await _until(lambda: len(host.messages) == 2)
        assert [m.text for m in host.messages] == ["Yes", "End."]
        twilio.user_texts(USER, "Stop")
        await _until(lambda: USER in adapter.optouts)
        with pytest.raises(NotSent) as refused:
            await adapter.send(CHAT, "are you there?")
        assert refused.value.permanent and "texted STOP" in str(refused.value)
        assert not twilio.sent(USER)
        twilio.user_texts(USER, "start")
        await _until(lambda: USER not in adapter.optouts)
        await adapter.send(CHAT, "welcome back")
        assert [t.body for t in twilio.sent(USER)] == ["welcome back"]
        twilio.user_texts(USER, "unsubscribe")
        await _until(lambda: USER in adapter.optouts)
        assert len(host.messages) == 2  # no keyword reached the gateway (or a model)

    _run(tmp_path, twilio, scenario, help_text="This number is Hermes. Text STOP to stop.")
    # Kept across restarts: a number that stopped stays stopped.
    config = {"webhook_url": "https://example.org/sms"}
    later = SmsAdapter(
        PlatformContext(name="sms", home=str(tmp_path), config=config, secrets=SECRETS)
    )
    assert USER in later.optouts


def test_twilio_saying_a_number_opted_out_is_believed(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        twilio.opted_out.add(USER)  # stopped through another of the account's numbers
        with pytest.raises(NotSent, match="21610") as refused:
            await adapter.send(CHAT, "hello")
        assert refused.value.permanent and USER in adapter.optouts

    _run(tmp_path, twilio, scenario)


def test_mms_pictures_arrive_named_by_their_text(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        picture = photo_bytes((64, 48))
        text = twilio.user_texts(USER, "what is this?", files=[(picture, "image/jpeg")])
        await _until(lambda: host.messages)
        (message,) = host.messages
        (file,) = message.attachments
        assert message.text == "what is this?" and message.message_id == text.sid
        assert (file.kind, file.mime, file.name) == ("image", "image/jpeg", f"{text.sid}-0.jpeg")
        assert Path(file.path).is_relative_to(tmp_path / "cache" / "media")

    _run(tmp_path, twilio, scenario)


def test_a_disguised_mms_is_refused_in_one_line(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        text = twilio.user_texts(USER, "", files=[(disguised_program(), "image/png")])
        await _until(lambda: twilio.sent(USER))
        (line,) = [t.body for t in twilio.sent(USER)]
        assert line.startswith(f"{text.sid}-0.png is refused") and "executable" in line
        assert "\n" not in line and host.messages == []

    _run(tmp_path, twilio, scenario)


def test_a_file_goes_out_as_an_mms_from_an_address_that_expires(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        picture = MediaCache.of_home(tmp_path).ingest(photo_bytes((64, 48)), name="chart.jpg")
        (sid,) = await adapter.send_file(CHAT, picture, caption="Your **chart**")
        (sent,) = twilio.sent(USER)
        assert sent.sid == sid and sent.body == "Your chart"
        assert sent.media[0][1] == Path(picture.path).read_bytes()
        (address,) = twilio.fetched_media
        assert "/sms/webhook/media/" in address and len(address.split("/media/")[1]) > 40
        adapter.files._files.clear()  # 15 minutes later
        import urllib.error
        import urllib.request

        with pytest.raises(urllib.error.HTTPError) as gone:
            await asyncio.to_thread(urllib.request.urlopen, address)
        assert gone.value.code == 404

    _run(tmp_path, twilio, scenario)


def test_texts_sent_while_away_are_read_back_once(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    port = free_port()

    async def first(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        twilio.user_texts(USER, "before")
        await _until(lambda: host.messages)

    _run(tmp_path, twilio, first, port)
    away = twilio.user_texts(USER, "while you were away")  # nothing listens: Twilio gives up
    asyncio.run(_until(lambda: twilio.webhook_answers[-1][0] == 0))

    async def second(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        await _until(lambda: host.messages)
        await asyncio.sleep(0.3)
        # "before" is listed again (clocks differ: a margin is read): the gateway admits a
        # text's sid once, so only its id matters here.
        assert away.sid in [m.message_id for m in host.messages]
        assert [m.text for m in host.messages if m.message_id == away.sid] == [
            "while you were away"
        ]

    _run(tmp_path, twilio, second, port)


def test_long_replies_are_split_and_typography_kept_to_gsm(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        await adapter.send(
            CHAT, "It\u2019s \u201cdone\u201d \u2014 see [the page](https://example.org)\u2026"
        )
        assert twilio.sent(USER)[0].body == 'It\'s "done" - see the page: https://example.org...'
        ids = await adapter.send(CHAT, "word " * 700)
        assert len(ids) == 3 and all(len(t.body) <= 1600 for t in twilio.sent(USER)[1:])

    _run(tmp_path, twilio, scenario)


@pytest.mark.parametrize(
    ("secrets", "config", "said"),
    [
        (
            {"TWILIO_AUTH_TOKEN": AUTH_TOKEN, "TWILIO_PHONE_NUMBER": NUMBER},
            {},
            "TWILIO_ACCOUNT_SID",
        ),
        ({**SECRETS, "TWILIO_PHONE_NUMBER": "555-1234"}, {}, "+15551234567"),
        (SECRETS, {}, "platforms.sms.webhook_url"),
    ],
)
def test_each_missing_setting_is_one_line(tmp_path, secrets, config, said) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PlatformNotConfigured) as raised:
        SmsAdapter(PlatformContext(name="sms", home=str(tmp_path), config=config, secrets=secrets))
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_revoked_credentials_stop_the_platform_in_one_line(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "platforms" / "sms").mkdir(parents=True)
    (tmp_path / "platforms" / "sms" / "read.json").write_text(
        '{"since": "2026-01-01T00:00:00+00:00"}'
    )

    async def main() -> None:
        context = PlatformContext(
            name="sms",
            home=str(tmp_path),
            config={"api_url": twilio.api_url, "webhook_url": "http://127.0.0.1:9/sms"},
            secrets={**SECRETS, "TWILIO_AUTH_TOKEN": "revoked"},
        )
        adapter = SmsAdapter(context)
        host = RecordingHost(free_port())
        try:
            with pytest.raises(PlatformNotConfigured, match="TWILIO_AUTH_TOKEN"):
                await adapter.run(host)
        finally:
            await adapter.aclose()
            await host.aclose()

    asyncio.run(main())


def test_a_text_during_a_read_back_does_not_move_past_what_is_unread(
    tmp_path, twilio, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(SmsAdapter, "read_back_after_failure", 0.2)
    port = free_port()

    async def first(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        twilio.user_texts(USER, "before")
        await _until(lambda: host.messages)

    _run(tmp_path, twilio, first, port)
    away = twilio.user_texts(USER, "while you were away")  # nothing listens
    asyncio.run(_until(lambda: twilio.webhook_answers[-1][0] == 0))
    twilio.refusals_of_lists = 1  # the first read-back fails (Twilio answers 500)

    async def second(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        twilio.user_texts(USER, "now")  # arrives by webhook while the read-back is failing
        await _until(lambda: any(m.text == "now" for m in host.messages))
        adapter._read_back_soon.set()
        await _until(lambda: away.sid in [m.message_id for m in host.messages])

    _run(tmp_path, twilio, second, port)


def test_a_webhook_signed_with_a_signing_key_and_a_query_in_the_address(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        url = str(twilio.webhook_url)
        params = {"From": USER, "To": NUMBER, "Body": "keyed", "MessageSid": "SM" + "a" * 32}
        keyed = twilio.sign(url, params, "kit-signing-key-secret", "HMAC_SHA256")
        settings = "key=webhooks_sharedkey_kit,algorithm=HMAC_SHA256"
        assert (await asyncio.to_thread(twilio.post, params, keyed, settings))[0] == 200
        plain = {**params, "MessageSid": "SM" + "b" * 32, "Body": "plain"}
        assert (await asyncio.to_thread(twilio.post, plain, twilio.sign(url, plain)))[0] == 200
        assert [m.text for m in host.messages] == ["keyed", "plain"]
        # A file served for MMS lives on the webhook's path, never under its query.
        picture = MediaCache.of_home(tmp_path).ingest(photo_bytes((32, 24)), name="p.jpg")
        await adapter.send_file(CHAT, picture)
        (address,) = twilio.fetched_media
        assert "?" not in address and address.startswith(url.split("?", maxsplit=1)[0] + "/media/")

    _run(tmp_path, twilio, scenario, query="?k=a%2Fb%20c")


def test_twilios_refusals_are_refusals_and_a_half_sent_reply_says_so(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: SmsAdapter, host: RecordingHost, twilio: FakeTwilio) -> None:
        twilio.refusals.append((400, 21614, "'To' number is not a valid mobile number"))
        with pytest.raises(NotSent) as landline:
            await adapter.send(CHAT, "hello")
        assert landline.value.permanent  # sending it again cannot help
        twilio.refusals.append((429, 20429, "Too Many Requests"))
        with pytest.raises(NotSent) as limited:
            await adapter.send(CHAT, "hello")
        assert not limited.value.permanent  # nothing went out: retried, with no note
        twilio.refusals.extend([None, (429, 20429, "Too Many Requests")])
        with pytest.raises(PartlySent, match="after 1 of its parts went out"):
            await adapter.send(CHAT, "word " * 700)
        twilio.refusals.extend([None, (400, 21617, "too long")])  # never: given up at once
        with pytest.raises(NotSent, match="after 1 of its parts went out") as never:
            await adapter.send(CHAT, "word " * 700)
        assert never.value.permanent

    _run(tmp_path, twilio, scenario)


def test_a_number_not_on_the_account_stops_the_platform_in_one_line(tmp_path, twilio) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        context = PlatformContext(
            name="sms",
            home=str(tmp_path),
            config={"api_url": twilio.api_url, "webhook_url": "http://127.0.0.1:9/sms"},
            secrets={**SECRETS, "TWILIO_PHONE_NUMBER": "+15557770000"},
        )
        adapter = SmsAdapter(context)
        host = RecordingHost(free_port())
        try:
            with pytest.raises(PlatformNotConfigured, match="not a number of this Twilio account"):
                await adapter.run(host)
        finally:
            await adapter.aclose()
            await host.aclose()

    asyncio.run(main())
