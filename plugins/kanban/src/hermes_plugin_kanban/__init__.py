"""``kanban``: the team's task board. Tasks that profiles claim, work on and complete, with
comments, links, attachments and every attempt's history, in the home's state store (so a
team on PostgreSQL shares one board); a dispatcher (a gateway service) that starts a worker
for each ready task an idle profile can take, and takes a task back from a worker that died;
the agent's board tools; ``hermes kanban``; and the board as a dashboard page. Importing
this is cheap: the work is in its modules, loaded when used."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    DashboardPanelSpec,
    ServiceSpec,
    ToolsetSpec,
    ToolSpec,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_sdk.importing import HomeImport, ImportSection
    from hermes_sdk.service import ServiceContext
    from hermes_sdk.storage import StoreSchema

NAME = "kanban"


def _service(context: ServiceContext) -> Any:
    from hermes_plugin_kanban.dispatcher import Dispatcher
    from hermes_plugin_kanban.settings import settings_from
    from hermes_sdk.service import ServiceNotConfigured

    try:
        settings = settings_from(context.config)
    except ValueError as exc:
        raise ServiceNotConfigured(str(exc)) from None
    return Dispatcher(context.home, settings)


def _tool(name: str) -> Any:
    async def handler(**arguments: Any) -> Any:
        from hermes_plugin_kanban.tools import TOOLS

        return await TOOLS[name](**arguments)

    return handler


@hookimpl
def hermes_store_schemas() -> list[StoreSchema]:
    from hermes_plugin_kanban.schema import SCHEMA

    return [SCHEMA]


@hookimpl
def hermes_services() -> Iterator[ServiceSpec]:
    yield ServiceSpec(
        name=NAME,
        description="The task board's dispatcher (hermes kanban)",
        factory=_service,
        config_section="kanban",
        enabled_by_default=True,
    )


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name=NAME,
        description="The team's task board: create, list, show, assign, complete ...",
        factory="hermes_plugin_kanban.command:kanban",
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name=NAME, description="The task board", model="hermes_plugin_kanban.settings:KanbanConfig"
    )


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    # Opt in (agent.add_toolsets: [kanban]): eight schemas in every chat's every request
    # would cost tokens where nobody uses the board; its workers always have them.
    yield ToolsetSpec(name=NAME, description="The team's task board", opt_in=True)


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    from hermes_plugin_kanban.tool_schemas import TOOL_SCHEMAS

    for name, (description, parameters) in TOOL_SCHEMAS.items():
        yield ToolSpec(
            name=name,
            toolset=NAME,
            description=description,
            parameters=parameters,
            handler=_tool(name),
            takes_context=True,
        )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name=NAME,
        title="Board",
        description="The team's task board: tasks by status, create, assign, block, complete.",
        factory="hermes_plugin_kanban.panel:BoardPanel",
        order=35,
    )


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    if request.source_kind == "hermes-agent":
        from hermes_plugin_kanban.importing import import_board

        yield import_board(request)
