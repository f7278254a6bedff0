"""``hermes`` with no command runs the command a plugin declares as the default
(``default_command.NAME`` in its manifest, ``CommandSpec(default=True)``), and ``-z TEXT``
asks it once through the parameter its spec names: the kernel names no front-end."""

from __future__ import annotations

import pytest

FRONT = """
from hermes_sdk import CommandSpec, hookimpl

def _front():
    import click

    @click.command()
    @click.option("--ask", "question", default=None)
    def front(question):
        click.echo(f"front: {question or 'interactive'}")

    return front

def _plain():
    import click

    @click.command()
    def plain():
        click.echo("plain: interactive")

    return plain

@hookimpl
def hermes_cli_commands():
    yield CommandSpec(name="front", description="A front-end.", factory=_front,
                      default=True, ask_parameter="question")
    yield CommandSpec(name="plain", description="Another.", factory=_plain)
"""

MODEL = """
from hermes_sdk import ProviderSpec, hookimpl

@hookimpl
def hermes_providers():
    yield ProviderSpec(name="fake", factory=lambda settings: None)
"""


@pytest.fixture
def hermes(hermes_cli, make_plugin, monkeypatch):
    def use(default: str = "front"):
        records = [
            make_plugin(
                "front",
                FRONT,
                declares=["command.front", "command.plain", f"default_command.{default}"],
            ),
            make_plugin("model", MODEL, declares=["provider.fake"]),
        ]
        monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: records)
        monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
        return hermes_cli

    return use


def test_bare_hermes_runs_the_declared_default_and_z_asks_it(hermes) -> None:
    cli = hermes()
    code, out, err = cli()
    assert code == 0, err
    assert out == "front: interactive\n"
    code, out, err = cli("-z", "what time is it")
    assert code == 0, err
    assert out == "front: what time is it\n"


def test_a_default_that_takes_no_question_refuses_z_in_one_line(hermes) -> None:
    cli = hermes("plain")
    assert cli()[1] == "plain: interactive\n"
    code, _, err = cli("-z", "hello")
    assert code == 1
    assert err.strip() == (
        "Error: -z cannot ask: the default command `hermes plain` takes no question; "
        "run `hermes plain` instead"
    )
