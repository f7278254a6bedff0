"""Markdown to Slack's mrkdwn, with slackify-markdown (on markdown-it-py: a real Markdown
parser, not regular expressions), plus the two things it leaves to us:

* literal text: ``&`` is doubled into ``&amp;`` first, so text that looks like an entity
  (``&amp;``) reaches the person as written instead of being decoded;
* mentions: ``<@U123>``, ``<!here>``, ``<!subteam^S1>`` and ``<#C1>`` written by the model
  (or by a payload it quotes) are shown as text, never sent as pings; links stay links.
"""

from __future__ import annotations

import re

__all__ = ["to_mrkdwn"]

_MENTION = re.compile(r"<(?=[@!#])")


def to_mrkdwn(markdown: str) -> str:
    from slackify_markdown import slackify_markdown

    text = slackify_markdown(markdown.replace("&", "&amp;")).rstrip("\n")
    return _MENTION.sub("&lt;", text)
