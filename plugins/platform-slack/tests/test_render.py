"""Markdown to mrkdwn: formatting converted, text shown as written, and nothing the model
writes ever pings anyone."""

from __future__ import annotations

import html

import pytest
from hermes_plugin_platform_slack.render import to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and _it_", "*bold* and _it_"),
        ("[the docs](https://example.org)", "<https://example.org|the docs>"),
        ("hi <@U0123> <!here> <!channel>", "hi &lt;@U0123> &lt;!here> &lt;!channel>"),
        ("<!subteam^S0123> and <#C0123>", "&lt;!subteam^S0123> and &lt;#C0123>"),
    ],
)
def test_markdown_becomes_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


def test_literal_text_survives() -> None:
    literal = "if a < b && c > d: print('<b>not bold</b>') &amp;"
    assert html.unescape(to_mrkdwn(literal)) == literal
