"""The ``email`` platform: a mailbox Hermes reads over IMAP and answers over SMTP, one
session per thread. Importing this is cheap; the mail libraries load when it starts."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="email",
        description="Email (IMAP IDLE in, SMTP or drafts out)",
        factory="hermes_plugin_platform_email.adapter:EmailAdapter",
    )
