"""Markdown to Telegram HTML, and Telegram updates to gateway events."""

from __future__ import annotations

import pytest
from hermes_plugin_platform_telegram.render import to_html
from hermes_plugin_platform_telegram.testing.telegram_markup import ParseError, visible_text
from hermes_plugin_platform_telegram.updates import Bot, GroupPolicy, read_update

from hermes_sdk.platform import ButtonPress, Inbound

BOT = Bot(id=555, username="hermes_bot")


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("plain & <simple>", "plain &amp; &lt;simple&gt;"),
        (
            "**bold** and *it* and _it_ and ~~gone~~",
            "<b>bold</b> and <i>it</i> and <i>it</i> and <s>gone</s>",
        ),
        ("use `a<b>` here", "use <code>a&lt;b&gt;</code> here"),
        ("[docs](https://x.io/a?b=1&c=2)", '<a href="https://x.io/a?b=1&amp;c=2">docs</a>'),
        ("# Title", "<b>Title</b>"),
        ("- one\n- two", "• one\n• two"),
        ("snake_case_name stays", "snake_case_name stays"),
        (
            "```python\nif a < b:\n    **x**\n```",
            '<pre><code class="language-python">if a &lt; b:\n    **x**</code></pre>',
        ),
        ("```\nunclosed <", "<pre>unclosed &lt;</pre>"),
    ],
)
def test_markdown_becomes_telegram_html(markdown, html):
    assert to_html(markdown) == html
    visible_text(html, "HTML")  # and Telegram would accept it


def test_model_output_cannot_inject_tags():
    assert visible_text(to_html("<a href='evil'>click</a>"), "HTML") == "<a href='evil'>click</a>"


def test_the_fake_refuses_what_telegram_refuses():
    with pytest.raises(ParseError):
        visible_text("<b>open", "HTML")
    with pytest.raises(ParseError):
        visible_text("<b>x</i>", "HTML")
    with pytest.raises(ParseError):
        visible_text("a < b", "HTML")
    with pytest.raises(ParseError):
        visible_text("end.", "MarkdownV2")
    assert visible_text("end\\.", "MarkdownV2") == "end."


def message(text, chat_type="private", chat_id=7, **extra):
    return {
        "update_id": 1,
        "message": {
            "message_id": 10,
            "from": {"id": 7, "is_bot": False, "username": "ann"},
            "chat": {"id": chat_id, "type": chat_type},
            "text": text,
            **extra,
        },
    }


def test_a_dm_is_addressed():
    event = read_update(message("hi"), BOT, GroupPolicy())
    assert isinstance(event, Inbound)
    assert (event.chat.chat_type, event.user_id, event.user_name, event.text) == (
        "private",
        "7",
        "@ann",
        "hi",
    )


def test_group_messages_need_a_mention_unless_configured():
    chatter = message("hello all", "supergroup", -100)
    assert read_update(chatter, BOT, GroupPolicy()) is None
    assert (
        read_update(chatter, BOT, GroupPolicy(chats={"-100": {"require_mention": False}}))
        is not None
    )
    mention = message(
        "hey @Hermes_Bot do it",
        "group",
        -100,
        entities=[{"type": "mention", "offset": 4, "length": 11}],
    )
    event = read_update(mention, BOT, GroupPolicy())
    assert isinstance(event, Inbound) and event.text == "hey do it" and event.addressed


def test_mentions_count_utf16_offsets():
    text = "😀 @hermes_bot hi"  # the emoji is two UTF-16 code units
    update = message(text, "group", -100, entities=[{"type": "mention", "offset": 3, "length": 11}])
    assert isinstance(read_update(update, BOT, GroupPolicy()), Inbound)


def test_replies_and_commands_address_the_bot_but_topic_roots_do_not():
    reply = message("yes", "supergroup", -100, reply_to_message={"from": {"id": 555}})
    assert isinstance(read_update(reply, BOT, GroupPolicy()), Inbound)
    topic = message(
        "yes", "supergroup", -100, reply_to_message={"from": {"id": 555}, "forum_topic_created": {}}
    )
    assert read_update(topic, BOT, GroupPolicy()) is None
    other_bot = message(
        "/new@other_bot",
        "group",
        -100,
        entities=[{"type": "bot_command", "offset": 0, "length": 14}],
    )
    assert read_update(other_bot, BOT, GroupPolicy()) is None
    ours = message(
        "/new@hermes_bot",
        "group",
        -100,
        entities=[{"type": "bot_command", "offset": 0, "length": 15}],
    )
    event = read_update(ours, BOT, GroupPolicy())
    assert isinstance(event, Inbound) and event.text == "/new"


def test_forum_topics_carry_their_thread():
    update = message(
        "@hermes_bot x",
        "supergroup",
        -100,
        message_thread_id=9,
        is_topic_message=True,
        entities=[{"type": "mention", "offset": 0, "length": 11}],
    )
    event = read_update(update, BOT, GroupPolicy())
    assert isinstance(event, Inbound) and event.chat.thread_id == "9"


def test_what_the_gateway_does_not_handle_is_skipped():
    assert read_update({"update_id": 1, "edited_message": {}}, BOT, GroupPolicy()) is None
    joined = message(None, new_chat_members=[{"id": 8}])
    assert read_update(joined, BOT, GroupPolicy()) is None  # a service message
    assert read_update(message("x", "channel", -5), BOT, GroupPolicy()) is None
    from_bot = message("x")
    from_bot["message"]["from"]["is_bot"] = True
    assert read_update(from_bot, BOT, GroupPolicy()) is None


def test_a_button_press():
    update = {
        "update_id": 2,
        "callback_query": {
            "id": "q",
            "from": {"id": 7},
            "message": {"message_id": 3, "chat": {"id": 7, "type": "private"}},
            "data": "abc123:once",
        },
    }
    event = read_update(update, BOT, GroupPolicy())
    assert event == ButtonPress(chat=event.chat, user_id="7", request_id="abc123", choice="once")


def test_media_without_text_reaches_the_agent_as_a_note():
    voice = read_update(message(None, voice={"file_id": "v"}), BOT, GroupPolicy())
    assert isinstance(voice, Inbound) and "a voice message" in voice.text
    assert "cannot open" in voice.text  # the agent can tell the user it was not read
    photo = read_update(message(None, photo=[{"file_id": "p"}], caption="look"), BOT, GroupPolicy())
    assert isinstance(photo, Inbound) and photo.text == "look"  # the caption is the text
    sticker = read_update(message(None, sticker={"emoji": "👍"}), BOT, GroupPolicy())
    assert isinstance(sticker, Inbound) and sticker.text == "👍"
    # In a group, media is for the bot only as a reply to it (no text to mention it in).
    group_photo = message(None, "group", -100, photo=[{"file_id": "p"}])
    assert read_update(group_photo, BOT, GroupPolicy()) is None
