"""Markdown to Slack's mrkdwn, with slackify-markdown (on markdown-it-py: a real Markdown
parser, not regular expressions), plus the two things it leaves to us:

* literal text: ``&`` is doubled into ``&amp;`` first, so text that looks like an entity
  (``&amp;``) reaches the person as written instead of being decoded;
* mass mentions: ``<!channel>``, ``<!here>`` and ``<!everyone>`` written by the model are
  shown, not sent as pings.
"""

from __future__ import annotations

import re

__all__ = ["to_mrkdwn"]

_SPECIAL_MENTION = re.compile(r"<!(channel|here|everyone)(\|[^>]*)?>")


def to_mrkdwn(markdown: str) -> str:
    from slackify_markdown import slackify_markdown

    text = slackify_markdown(markdown.replace("&", "&amp;")).rstrip("\n")
    return _SPECIAL_MENTION.sub(lambda m: f"&lt;!{m.group(1)}&gt;", text)
