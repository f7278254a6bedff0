"""The ``sms`` platform: a Twilio phone number. Texts arrive as webhooks on the gateway's
shared HTTP listener (each checked with Twilio's ``X-Twilio-Signature``, by the official
library's validator); replies and MMS pictures go out through Twilio's REST API with the
official ``twilio`` library. STOP, START and HELP are honoured as carriers require.
Importing this is cheap; twilio is imported when the gateway starts it."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="sms",
        description="SMS and MMS through Twilio (signed webhooks, STOP/HELP honoured)",
        factory="hermes_plugin_platform_sms.adapter:SmsAdapter",
    )
