"""Which Slack events reach the gateway, as what."""

from __future__ import annotations

from hermes_plugin_platform_slack.reading import Bot, SharedFile, read_event, shared_files

BOT = Bot(user_id="U0HERMES", bot_id="B0HERMES")


def event(**fields: object) -> dict[str, object]:
    return {
        "type": "message",
        "channel": "C0GENERAL",
        "user": "U0PERSON",
        "ts": "1.000100",
        **fields,
    }


def test_what_is_not_for_the_bot_is_dropped() -> None:
    dropped = [
        event(text="chatter"),  # a channel, no mention
        event(text="mine", user="U0HERMES"),  # the bot's own
        event(text="another bot", bot_id="B0OTHER"),
        event(text="edited", subtype="message_changed", channel_type="im", channel="D0X"),
        event(text="", channel_type="im", channel="D0X"),
    ]
    assert [read_event(e, BOT, require_mention=True) for e in dropped] == [None] * len(dropped)


def test_a_mention_is_answered_in_its_thread_and_its_files_are_listed() -> None:
    files = [
        {"name": "plan.pdf", "mimetype": "application/pdf", "size": 2048, "url_private": "u"},
        {"name": "link", "mode": "external", "url_private": "v"},
    ]
    inbound = read_event(
        event(type="app_mention", text="<@U0HERMES> read this &amp; that", files=files),
        BOT,
        require_mention=True,
    )
    assert inbound is not None
    assert (inbound.chat.chat_type, inbound.chat.thread_id) == ("group", "1.000100")
    assert inbound.text == "read this & that"
    shared = shared_files({"files": files})
    assert shared == [SharedFile(name="plan.pdf", mimetype="application/pdf", size=2048, url="u")]


def test_a_thread_the_bot_answers_in_needs_no_mention() -> None:
    bot = Bot(user_id="U0HERMES", bot_id="B0HERMES", threads={("C0GENERAL", "0.5")})
    inbound = read_event(event(text="and then?", thread_ts="0.5"), bot, require_mention=True)
    assert inbound is not None and inbound.chat.thread_id == "0.5" and inbound.addressed
    other = read_event(event(text="and then?", thread_ts="0.7"), bot, require_mention=True)
    assert other is None


def test_slacks_markup_reaches_the_model_as_plain_text() -> None:
    from hermes_plugin_platform_slack.reading import plain_text

    said = {
        "see <https://example.com/a?b=1&amp;c=2|the report>": (
            "see the report (https://example.com/a?b=1&c=2)"
        ),
        "<https://example.com|example.com> and <https://example.com>": (
            "https://example.com and https://example.com"
        ),
        "ask <@U0ANNA|anna> in <#C0OPS|ops>, or <#C0DEV>": "ask @anna in #ops, or #C0DEV",
        "<!here> <!subteam^S0TEAM|@oncall>: deploy at <!date^1700000000^{time}|noon>": (
            "@here @oncall: deploy at noon"
        ),
        "mail <mailto:a@b.org|a@b.org>; 1 &lt; 2 &amp;&amp; 3 &gt; 2": "mail a@b.org; 1 < 2 && 3 > 2",
        "paging <!subteam^S0TEAM>": "paging @subteam",  # no label: not dropped
    }
    assert {text: plain_text(text) for text in said} == said
    mention = event(text="<@U0HERMES> read <https://x.org/p|this page>", channel_type="im")
    read = read_event(mention, BOT, require_mention=True)
    assert read is not None and read.text == "read this page (https://x.org/p)"
