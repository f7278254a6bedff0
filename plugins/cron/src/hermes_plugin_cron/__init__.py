"""``cron``: scheduled jobs. A job is a prompt (or a script) run on a schedule by a fresh
agent, its result delivered where the user asked; every due instant gets one run record.

``hermes cron ...`` manages jobs; the gateway runs the scheduler as a service; the
``cronjob`` tool lets the agent schedule on request. Importing this is cheap: croniter,
click and pydantic load when they are used.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    DashboardPanelSpec,
    Finding,
    HealthContext,
    ServiceSpec,
    StatusLine,
    ToolsetSpec,
    ToolSpec,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_sdk.importing import HomeImport, ImportSection
    from hermes_sdk.service import ServiceContext
    from hermes_sdk.storage import StoreSchema

NAME = "cron"


def _service(context: ServiceContext) -> Any:
    from hermes_plugin_cron.service import CronService
    from hermes_plugin_cron.settings import settings_from
    from hermes_sdk.service import ServiceNotConfigured

    try:
        settings = settings_from(context.config)
    except ValueError as exc:
        raise ServiceNotConfigured(str(exc)) from None
    return CronService(context.home, settings)


def _cronjob(**arguments: Any) -> Any:
    from hermes_plugin_cron.tool import cronjob

    return cronjob(**arguments)


@hookimpl
def hermes_store_schemas() -> list[StoreSchema]:
    from hermes_plugin_cron.runs import SCHEMA

    return [SCHEMA]


@hookimpl
def hermes_services() -> Iterator[ServiceSpec]:
    yield ServiceSpec(
        name=NAME,
        description="Scheduled jobs (hermes cron)",
        factory=_service,
        enabled_by_default=True,
    )


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name=NAME,
        description="Scheduled jobs: create, list, run ...",
        factory="hermes_plugin_cron.command:cron",
    )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name=NAME,
        title="Scheduled jobs",
        description="Jobs on a schedule: create, change, pause, run now, and every run.",
        factory="hermes_plugin_cron.panel:CronPanel",
        order=30,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name=NAME, description="Scheduled jobs", model="hermes_plugin_cron.settings:CronConfig"
    )


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="cron", description="Schedule jobs on the user's request")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    from hermes_plugin_cron.tool_schema import CRONJOB_DESCRIPTION, CRONJOB_PARAMETERS

    yield ToolSpec(
        name="cronjob",
        toolset="cron",
        description=CRONJOB_DESCRIPTION,
        parameters=CRONJOB_PARAMETERS,
        handler=_cronjob,
        takes_context=True,
    )


@hookimpl
def hermes_status_lines(context: HealthContext) -> Iterator[StatusLine]:
    from hermes_plugin_cron.health import status_lines

    yield from status_lines(context)


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_cron.health import doctor_checks

    yield from doctor_checks(context)


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    from hermes_plugin_cron.importing import SOURCE_KINDS, import_jobs

    if request.source_kind in SOURCE_KINDS:
        yield import_jobs(request)
