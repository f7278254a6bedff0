"""``web_ui``: Hermes in the browser.

``hermes web`` serves it alone; with ``web_ui.enabled: true`` the gateway hosts it beside
the chat platforms. It is a front-end on the SDK's runtime contract and nothing else: chat
with streamed replies, tool calls and approval buttons; stored sessions; status and usage;
pending memory and skill writes; the plugins. Importing this is cheap: aiohttp, jinja2 and
markdown-it load when it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import CommandSpec, ConfigSectionSpec, DashboardPanelSpec, ServiceSpec, hookimpl
from hermes_sdk.service import ServiceContext

NAME = "web_ui"


def _service(context: ServiceContext) -> Any:
    from hermes_plugin_web_ui.server import WebUi
    from hermes_plugin_web_ui.settings import settings_from

    return WebUi(settings_from(context.config, context.secrets, home=context.home))


@hookimpl
def hermes_services() -> Iterator[ServiceSpec]:
    yield ServiceSpec(name=NAME, description="Hermes in the browser (hermes web)", factory=_service)


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="web",
        description="Open Hermes in the browser: chat, sessions, status.",
        factory="hermes_plugin_web_ui.command:web",
    )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="settings",
        title="Settings",
        description="Every section of config.yaml, typed by its owner; secrets in .env.",
        factory="hermes_plugin_web_ui.settings_panel:SettingsPanel",
        order=10,
    )
    yield DashboardPanelSpec(
        name="logs",
        title="Logs",
        description="The logs in HERMES_HOME/logs, live, filtered by level and component.",
        factory="hermes_plugin_web_ui.admin_panels:LogsPanel",
        order=80,
    )
    yield DashboardPanelSpec(
        name="profiles",
        title="Profiles",
        description="Named homes: list, create, and choose the one hermes commands use.",
        factory="hermes_plugin_web_ui.admin_panels:ProfilesPanel",
        order=90,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name=NAME,
        description="The web UI (hermes web)",
        model="hermes_plugin_web_ui.settings:WebUiConfig",
    )
