"""PlatformContext.token: the bot's token, from the variable the user named or the default."""

from __future__ import annotations

import pytest

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured


def context(config: dict[str, str], secrets: dict[str, str]) -> PlatformContext:
    return PlatformContext(name="chat", home="/nowhere", config=config, secrets=secrets)


def test_the_default_variable_or_the_one_named() -> None:
    assert context({}, {"CHAT_TOKEN": " abc \n"}).token("CHAT_TOKEN", "x") == "abc"
    named = context({"token_env": "WORK_BOT"}, {"CHAT_TOKEN": "abc", "WORK_BOT": "def"})
    assert named.token("CHAT_TOKEN", "x") == "def"


@pytest.mark.parametrize("secrets", [{}, {"CHAT_TOKEN": "  "}])
def test_a_missing_token_says_what_to_set(secrets: dict[str, str]) -> None:
    with pytest.raises(PlatformNotConfigured) as raised:
        context({}, secrets).token("CHAT_TOKEN", "the token the service gave your bot")
    assert str(raised.value) == (
        "set CHAT_TOKEN in HERMES_HOME/.env to the token the service gave your bot"
    )
