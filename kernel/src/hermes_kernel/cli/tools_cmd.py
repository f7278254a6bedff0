"""``hermes tools``: every tool the model can be given, by toolset and plugin, and each one's
schema. The chat's ``/tools`` prints the same list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from hermes_kernel.cli.main import HermesGroup, app_of

if TYPE_CHECKING:
    from hermes_kernel.tooling.listing import ToolRow
    from hermes_sdk import ToolSpec


def _rows(ctx: click.Context) -> tuple[list[ToolRow], dict[str, ToolSpec] | None]:
    """The installed tools, and those agent.toolsets gives the model (None: all of them)."""
    from hermes_kernel.memory.external import ExternalMemory
    from hermes_kernel.runtime.agent import choose_tools
    from hermes_kernel.tooling.listing import tool_rows

    app = app_of(ctx)
    memory = ExternalMemory(app.host, app.settings)
    try:
        rows = tool_rows(app.host, memory.tools(), memory.name or "")
    finally:
        memory.close()
    configured = (app.settings.raw.get("agent") or {}).get("toolsets")
    if configured is None:
        return rows, None
    given, _ = choose_tools([row.spec for row in rows], tuple(configured))
    return rows, given


@click.group(cls=HermesGroup, invoke_without_command=True)
@click.pass_context
def tools(ctx: click.Context) -> None:
    """List the tools the model can be given, or show one with its schema."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_tools)


@tools.command("list")
@click.pass_context
def list_tools(ctx: click.Context) -> None:
    """Every installed tool, by toolset, with the plugin it comes from."""
    from hermes_kernel.tooling.listing import listing_lines

    rows, given = _rows(ctx)
    if not rows:
        click.echo("No tools are installed: the model can only talk. Install a toolset plugin")
        click.echo("(the standard bundle has terminal, files and planning).")
        return
    for line in listing_lines(rows, given):
        click.echo(line)
    if given is not None:
        click.echo(
            "\n[not given]: outside agent.toolsets in config.yaml; --toolsets picks per chat"
        )


@tools.command("show")
@click.argument("name")
@click.pass_context
def show_tool(ctx: click.Context, name: str) -> None:
    """One tool: its toolset, plugin, description and argument schema, as the model sees them."""
    from hermes_kernel.tooling.listing import describe_tool, suggest

    rows, _ = _rows(ctx)
    found = [row for row in rows if row.spec.name == name]
    if not found:
        hint = suggest(name, [row.spec.name for row in rows])
        raise click.ClickException(f"no tool named {name!r}{hint} (hermes tools list shows them)")
    for line in describe_tool(found[0]):
        click.echo(line)
