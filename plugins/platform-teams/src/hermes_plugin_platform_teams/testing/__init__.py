"""The Bot Framework on loopback, for tests: :class:`FakeBotFramework` (signed activities,
the OpenID metadata and keys, the token endpoint, the Bot Connector)."""

from hermes_plugin_platform_teams.testing.bot_framework import (
    APP_ID,
    APP_PASSWORD,
    TENANT_ID,
    Activity,
    FakeBotFramework,
)

__all__ = ["APP_ID", "APP_PASSWORD", "TENANT_ID", "Activity", "FakeBotFramework"]
