"""A plugin adds subcommands to the kernel's command groups (``CommandSpec`` named
``GROUP.NAME``), listed from metadata and imported only when run; a missing one is one line
saying what to enable or install, and the kernel's own ``plugins`` commands keep working."""

from __future__ import annotations

import pytest

GREETER = """
from hermes_sdk import CommandSpec, hookimpl

def _greet():
    import click

    @click.command()
    @click.argument("who")
    def greet(who):
        from hermes_sdk.events import COMMAND_CONTEXT

        context = click.get_current_context().meta[COMMAND_CONTEXT]
        names = sorted(plugin.name for plugin in context.plugins())
        click.echo(f"hello {who}; installed: {', '.join(names)}")
        context.set_plugin_enabled("other", False)

    return greet

@hookimpl
def hermes_cli_commands():
    yield CommandSpec(name="plugins.greet", description="Say hello.", factory=_greet)
    yield CommandSpec(name="config.greet", description="Say hello here too.", factory=_greet)
"""

OTHER = """
from hermes_sdk import hookimpl

@hookimpl
def hermes_status_lines(context):
    return []
"""


@pytest.fixture
def hermes(hermes_cli, make_plugin, monkeypatch):
    records = [
        make_plugin("greeter", GREETER, declares=["command.plugins.greet", "command.config.greet"]),
        make_plugin("other", OTHER, declares=["hook.hermes_status_lines"]),
    ]
    monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: records)
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    return hermes_cli


def test_a_plugin_adds_a_subcommand_to_a_kernel_group(hermes):
    code, out, err = hermes("plugins", "--help")
    assert code == 0, err
    assert "  greet    (plugin greeter)" in out  # its help file would say what it does
    assert "list" in out and "enable" in out  # the group's own commands stay
    assert "greet" in hermes("config", "--help")[1]
    assert "greet" not in hermes("--help")[1]  # declared in a group, not at the top
    code, out, err = hermes("plugins", "greet", "you")
    assert code == 0, err
    assert out.startswith("hello you; installed: greeter, other")
    assert "other" in (hermes.home / "config.yaml").read_text()  # set_plugin_enabled wrote it


def test_a_disabled_plugins_subcommand_says_how_to_enable_it(hermes, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "greeter")
    code, _, err = hermes("plugins", "greet", "you")
    assert code == 1
    assert err.strip() == (
        "Error: `hermes plugins greet` comes from plugin 'greeter' (hermes-plugin-greeter), "
        "which is disabled (blocked by HERMES_DISABLE_PLUGINS); take greeter out of "
        "HERMES_DISABLE_PLUGINS"  # `hermes plugins enable` would not help here
    )
    assert hermes("plugins", "list")[0] == 0


def test_without_the_plugin_manager_installing_names_it_and_the_rest_works(hermes_cli):
    # Every plugin is blocked here, and none of the records below provides the commands.
    for args in [("plugins", "install", "x"), ("update",), ("plugins", "catalog")]:
        code, _, err = hermes_cli(*args)
        assert code == 1, args
        assert err.count("\n") == 1, err  # one line
        assert "hermes-plugin-plugin-manager" in err
    assert hermes_cli("plugins", "list")[0] == 0
    assert hermes_cli("plugins", "disable", "plugin-manager")[0] == 0
    assert hermes_cli("plugins", "enable", "plugin-manager")[0] == 0
    code, _, err = hermes_cli("plugins", "nope")
    assert code == 2 and "No such command 'nope'" in err  # no hint for what nobody provides


def test_not_installed_names_the_distribution(hermes_cli, monkeypatch):
    monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: [])
    code, _, err = hermes_cli("plugins", "install", "x")
    assert code == 1
    assert err.strip() == (
        "Error: `hermes plugins install` comes from the plugin manager, which is not "
        "installed: install hermes-plugin-plugin-manager (pip install "
        "hermes-plugin-plugin-manager, in the environment Hermes runs in)"
    )
    code, _, err = hermes_cli("update", "--check")
    assert code == 1 and "install hermes-plugin-plugin-manager" in err
    code, out, _ = hermes_cli("plugins", "list")
    assert code == 0 and "No plugins are installed" in out
    assert hermes_cli("plugins", "info", "x")[0] == 1  # "no installed plugin named 'x'"


def test_a_plugin_may_not_replace_the_repair_commands(make_plugin):
    from hermes_kernel.plugins.host import RESERVED_COMMANDS

    assert {"plugins.list", "plugins.info", "plugins.enable", "plugins.disable"} <= (
        RESERVED_COMMANDS
    )


HOST = """
from hermes_sdk import CommandSpec, hookimpl

def _kettle():
    import click

    @click.group()
    def kettle():
        "Boil water."

    @kettle.command()
    def boil():
        "Boil it now."
        click.echo("boiling")

    @kettle.group()
    def timer():
        "Timers."

    @kettle.command(hidden=True)
    def descale():
        "Not listed."
        click.echo("descaled")

    return kettle

@hookimpl
def hermes_cli_commands():
    yield CommandSpec(name="kettle", description="Boil water.", factory=_kettle)
"""

ADDER = """
from hermes_sdk import CommandSpec, hookimpl

def _made(name, said):
    def build():
        import click

        @click.command(name=name)
        def command():
            from hermes_sdk.events import COMMAND_CONTEXT

            context = click.get_current_context().meta[COMMAND_CONTEXT]
            click.echo(f"{said} in {context.home}")

        return command
    return build

@hookimpl
def hermes_cli_commands():
    yield CommandSpec(name="kettle.schedule", description="Boil later.", factory=_made("schedule", "scheduled"))
    yield CommandSpec(name="kettle.boil", description="Not this one.", factory=_made("boil", "replaced"))
    yield CommandSpec(name="kettle.timer.set", description="Set one.", factory=_made("set", "set"))
"""


@pytest.fixture
def kettles(hermes_cli, make_plugin, monkeypatch):
    records = [
        make_plugin("kettle", HOST, declares=["command.kettle"]),
        make_plugin(
            "adder",
            ADDER,
            declares=["command.kettle.schedule", "command.kettle.boil", "command.kettle.timer.set"],
        ),
    ]
    monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: records)
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    return hermes_cli


def test_a_plugin_adds_a_subcommand_to_another_plugins_group(kettles):
    code, out, err = kettles("kettle", "--help")
    assert code == 0, err
    assert "  boil      Boil it now.\n" in out  # its own, not said to be built in
    assert "schedule  (plugin adder)" in out
    assert out.count("boil") == 1  # the group's own command wins over the added one
    assert "descale" not in out  # hidden, as click hides it
    assert kettles("kettle", "descale")[1].strip() == "descaled"  # and still runs
    code, out, err = kettles("kettle", "schedule")
    assert code == 0, err
    assert out.strip() == f"scheduled in {kettles.home}"  # with the command's context
    assert kettles("kettle", "boil")[1].strip() == "boiling"
    code, out, err = kettles("kettle", "timer", "set")  # and to a group inside it
    assert code == 0, err
    assert out.startswith("set in ")
    assert "  set  (plugin adder)" in kettles("kettle", "timer", "--help")[1]


def test_a_disabled_adder_of_a_plugins_group_says_how_to_enable_it(kettles, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "adder")
    code, _, err = kettles("kettle", "schedule")
    assert code == 1
    assert "`hermes kettle schedule` comes from plugin 'adder'" in err
    assert err.count("\n") == 1
    code, out, _ = kettles("kettle", "--help")
    assert code == 0 and "schedule" not in out and "boil" in out
    assert kettles("kettle", "nope")[0] == 2  # click's own "no such command"
