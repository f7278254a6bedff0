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


def test_c_and_r_go_on_with_a_session_through_the_defaults_own_options(
    hermes_cli, make_plugin, monkeypatch
) -> None:
    """``hermes -c`` and ``hermes -r ID`` reach the default command's parameters its spec
    names (the chat's --continue and --resume); a default without them refuses in one line,
    and a command given by name takes its own options instead."""
    front = FRONT.replace(
        '@click.option("--ask", "question", default=None)\n    def front(question):\n'
        "        click.echo(f\"front: {question or 'interactive'}\")",
        '@click.option("--ask", "question", default=None)\n'
        '    @click.option("--again", is_flag=True)\n'
        '    @click.option("--session", default=None)\n'
        "    def front(question, again, session):\n"
        '        click.echo(f"front: {question} again={again} session={session}")',
    ).replace(
        'ask_parameter="question")',
        'ask_parameter="question",\n                      continue_parameter="again", '
        'resume_parameter="session")',
    )
    assert front != FRONT and "resume_parameter" in front
    records = [
        make_plugin(
            "front", front, declares=["command.front", "command.plain", "default_command.front"]
        ),
        make_plugin("model", MODEL, declares=["provider.fake"]),
    ]
    monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: records)
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    assert hermes_cli("-c")[1] == "front: None again=True session=None\n"
    assert hermes_cli("--continue", "-z", "hi")[1] == "front: hi again=True session=None\n"
    assert hermes_cli("-r", "2026")[1] == "front: None again=False session=2026\n"
    assert hermes_cli("--resume", "2026")[1] == "front: None again=False session=2026\n"
    for flags in (("-c",), ("-r", "2026"), ("-z", "hi")):
        code, _, err = hermes_cli(*flags, "plain")
        assert code == 2 and "-z, -c, -r, -m, -t and -s go with `hermes` alone" in err, flags
    code, _, err = hermes_cli("-r", "")
    assert code == 2 and "-r needs a session's id" in err


def test_a_default_that_keeps_no_sessions_refuses_c_in_one_line(hermes) -> None:
    cli = hermes("plain")
    code, _, err = cli("-c")
    assert code == 1
    assert err.strip() == (
        "Error: -c cannot go on: the default command `hermes plain` goes on with no earlier "
        "session; run `hermes plain` instead"
    )
