"""hermes-plugin-hello: greets people, as a tool for the model and as a command for you."""

import logging

from pydantic import BaseModel

from hermes_sdk import CommandSpec, ConfigSectionSpec, ToolSpec, hookimpl

log = logging.getLogger(__name__)


class HelloConfig(BaseModel):
    """The ``hello:`` section of config.yaml."""

    greeting: str = "Hello"


def greet(name: str, greeting: str = "Hello") -> str:
    return f"{greeting}, {name}!"


@hookimpl
def hermes_tools():
    yield ToolSpec(
        name="greet",
        description="Greet someone by name.",
        handler=greet,
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string", "description": "who to greet"}},
            "required": ["name"],
        },
        parallel_safe=True,
    )


def _greet_command():
    import click  # imported only when the command runs

    @click.command(help="Print a greeting.")
    @click.argument("name")
    def command(name: str) -> None:
        click.echo(greet(name))

    return command


@hookimpl
def hermes_cli_commands():
    yield CommandSpec(name="greet", description="Print a greeting.", factory=_greet_command)


@hookimpl
def hermes_config_sections():
    yield ConfigSectionSpec(name="hello", model=HelloConfig)


@hookimpl
def hermes_on_session_start(session):
    log.info("hello, session %s from %s", session.session_id, session.source)
