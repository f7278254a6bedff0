"""The ``hermes`` entry point.

Built-in subcommands are imported only when run; plugin subcommands are listed, each with
its plugin's one-line description of it, from package metadata and help files, and their
plugin is imported only when the command runs. Errors a user can fix
(a malformed config, a plugin failing in strict mode) end as one line and exit status 1.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_kernel._version import __version__

if TYPE_CHECKING:
    from hermes_kernel.app import App
    from hermes_kernel.plugins.records import PluginRecord
    from hermes_sdk import Kind
    from hermes_sdk.archive import SessionArchive
    from hermes_sdk.events import CommandContext
    from hermes_sdk.runtime import PluginState, Runtime, RuntimeOptions, SessionHistory

_BUILTINS: dict[str, tuple[str, str]] = {
    "config": ("hermes_kernel.cli.config_cmd:config", "Show, locate and validate config.yaml."),
    "doctor": (
        "hermes_kernel.cli.doctor_cmd:doctor",
        "Check this installation; each finding with its fix.",
    ),
    "import": (
        "hermes_kernel.cli.import_cmd:import_home",
        "Bring another tool's home over, through an importer.",
    ),
    "logs": (
        "hermes_kernel.cli.logs_cmd:logs",
        "Show or follow the logs in HERMES_HOME/logs (agent, errors, a front-end's ...).",
    ),
    "plugins": (
        "hermes_kernel.cli.plugins_cmd:plugins",
        "List, inspect, enable and disable plugins.",
    ),
    "profile": (
        "hermes_kernel.cli.profile_cmd:profile",
        "List, create, switch, show and delete named profiles.",
    ),
    "status": (
        "hermes_kernel.cli.status_cmd:status",
        "One screen: the model, the plugins and what they report, sessions, disk.",
    ),
    "store": (
        "hermes_kernel.cli.store_cmd:store",
        "Say where the state is kept; copy it into another store engine's database, or back.",
    ),
    "tools": (
        "hermes_kernel.cli.tools_cmd:tools",
        "List the tools the model can be given; show one's schema.",
    ),
}

PLUGIN_MANAGER = "hermes-plugin-plugin-manager"
"""The distribution whose plugin installs the others: the one plugin the kernel names, so that
a home without it is told how to get it back (its commands, listed below, are the repair path
beside ``hermes plugins list | info | enable | disable``)."""

_MANAGING = frozenset(
    {"update", "plugins.install", "plugins.uninstall", "plugins.upgrade", "plugins.catalog"}
    | {"plugins.validate", "plugins.outdated"}
)
"""Commands of the plugin manager's, by dotted path: when nothing provides one, the error says
to install it."""


def _version_text() -> str:
    from hermes_sdk._version import __version__ as sdk_version

    return f"hermes {__version__} (hermes-kernel {__version__}, hermes-sdk {sdk_version})"


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(_version_text())
        ctx.exit(0)


def app_of(ctx: click.Context) -> App:
    """The invocation's :class:`~hermes_kernel.app.App`, created on first use."""
    root = ctx.find_root()
    app: App | None = root.meta.get("hermes.app")
    if app is None:
        from hermes_kernel.app import App
        from hermes_kernel.config.settings import Flags
        from hermes_kernel.log import setup_logging

        params = root.params
        flags = Flags(
            home=Path(params["home"]) if params.get("home") else None,
            profile=params.get("profile"),
            safe_mode=bool(params.get("safe_mode")),
            strict_plugins=bool(params.get("strict_plugins")),
            verbose=bool(params.get("verbose")),
        )
        app = App(flags, setup_logging(flags.verbose))
        root.meta["hermes.app"] = app
        root.call_on_close(app.close)
    return app


class HermesGroup(click.Group):
    """A command group that plugins extend: beside its own commands, each command a plugin
    declares under its path (``command.NAME`` for ``hermes NAME``, ``command.GROUP.NAME`` for
    ``hermes GROUP NAME``), listed from metadata and imported only when it runs. Any kernel
    group made with this class takes plugins' subcommands, and so does a plugin's own group
    (:func:`extendable`); its own cannot be replaced."""

    def own_commands(self, ctx: click.Context) -> dict[str, str]:
        """This group's own commands, each with its line of help (nothing imported)."""
        return {name: command.get_short_help_str(80) for name, command in self.commands.items()}

    def own_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.get(cmd_name)

    def own_help(self, described: str) -> str:
        """An own command's line in this group's help (the kernel's say they are built in)."""
        return builtin_help(described)

    def path(self, ctx: click.Context) -> str:
        """This group's dotted path below ``hermes``: '' for the top, ``plugins`` for
        ``hermes plugins``; a plugin's subcommand of it is declared as PATH.NAME."""
        names: list[str] = []
        while ctx.parent is not None:
            names.append(ctx.info_name or "")
            ctx = ctx.parent
        return ".".join(reversed(names))

    def _key(self, ctx: click.Context, cmd_name: str) -> str:
        path = self.path(ctx)
        return f"{path}.{cmd_name}" if path else cmd_name

    def plugin_commands(self, ctx: click.Context) -> dict[str, PluginRecord]:
        """Declared plugin command of this group -> the plugin declaring it, from metadata;
        empty if config is broken."""
        from hermes_kernel.config.errors import ConfigError

        try:
            declared = app_of(ctx).host.declared(_command_kind())
        except ConfigError:
            return {}
        path = self.path(ctx)
        prefix = f"{path}." if path else ""
        own = self.own_commands(ctx)
        found = {}
        for key, records in declared.items():
            name = key.removeprefix(prefix)
            if key.startswith(prefix) and "." not in name and name not in own:
                found[name] = records[0]
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.own_commands(ctx), *self.plugin_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.lookup(ctx, cmd_name)
        if found is None:
            _not_provided(ctx, self._key(ctx, cmd_name))
        return found

    def lookup(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name`` of this group, its own or an enabled plugin's; None when
        there is none (a plugin that declares it and fails is one line: ClickException)."""
        own = self.own_command(ctx, cmd_name)
        if own is not None:
            return own
        from hermes_sdk import CommandSpec
        from hermes_sdk.events import COMMAND_CONTEXT

        host = app_of(ctx).host
        key = self._key(ctx, cmd_name)
        record = self.plugin_commands(ctx).get(cmd_name)
        declarer = record.name if record is not None else None
        if declarer is None and all(record.has_manifest for record in host.enabled()):
            return None  # nobody declares it, and no plugin without a manifest could
        provided = host.require(_command_kind(), key)
        if provided is None:
            if declarer is None:
                return None
            outcome = host.outcomes.get(declarer)
            reason = (
                f"failed to load: {outcome.error}"
                if outcome is not None and not outcome.ok
                else "does not provide it"
            )
            raise click.ClickException(
                f"command {_spoken(key)!r} is declared by plugin {declarer!r}, which {reason}"
            )
        spec = provided.spec
        assert isinstance(spec, CommandSpec)  # the index holds CommandSpecs under COMMAND
        try:
            built = spec.build()
        except Exception as exc:
            raise click.ClickException(
                f"plugin {provided.plugin!r} failed to build command {_spoken(key)!r}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(built, click.Command):
            raise click.ClickException(
                f"plugin {provided.plugin!r}: command {_spoken(key)!r} factory returned "
                f"{type(built).__name__}, expected a click.Command"
            )
        ctx.meta[COMMAND_CONTEXT] = command_context(app_of(ctx))
        return extendable(built)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text comes from our table, plugin metadata and help files: listing commands
        # imports nothing.
        rows = [(name, self.own_help(text)) for name, text in self.own_commands(ctx).items()]
        path = self.path(ctx)
        for name, record in self.plugin_commands(ctx).items():
            described = record.help_for(_command_kind(), f"{path}.{name}" if path else name)
            rows.append((name, plugin_command_help(described, record.name)))
        if rows:
            with formatter.section("Commands"):
                _write_rows(formatter, sorted(rows))


class _PluginGroup(HermesGroup):
    """A plugin's own command group, extended as the kernel's are: ``hermes GROUP NAME`` may
    come from another plugin (``command.GROUP.NAME``). Its own commands are those of the
    class the plugin made it with, looked up as that class looks them up."""

    def _made(self) -> type[click.Group]:
        """The class the plugin made the group with: next after the kernel's in the MRO."""
        order = type(self).__mro__
        made: type[click.Group] = order[order.index(HermesGroup) + 1]
        return made

    def own_commands(self, ctx: click.Context) -> dict[str, str]:
        made = self._made()
        found = {}
        for name in made.list_commands(self, ctx):
            command = made.get_command(self, ctx, name)
            if command is not None and not command.hidden:
                found[name] = command.get_short_help_str(80)
        return found

    def own_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self._made().get_command(self, ctx, cmd_name)
        return None if command is None else extendable(command)

    def own_help(self, described: str) -> str:
        return described


def extendable(command: click.Command) -> click.Command:
    """``command``, or for a plugin's group (and each group inside it) a copy that also lists
    and runs the subcommands other plugins declare under its path; the plugin's own object
    is left as it was. Its own commands are looked up as its class looks them up, and
    cannot be replaced; listing and help are the kernel's (a custom ``format_commands`` is
    not used)."""
    if not isinstance(command, click.Group) or isinstance(command, HermesGroup):
        return command
    made = type(command)
    extended = (
        _PluginGroup
        if made is click.Group
        else type(f"Extended{made.__name__}", (_PluginGroup, made), {})
    )
    copied = copy.copy(command)
    copied.__class__ = extended
    return copied


class _TopGroup(HermesGroup):
    """``hermes`` itself: its own commands are imported from a table only when they run."""

    def own_commands(self, ctx: click.Context) -> dict[str, str]:
        return {name: help_text for name, (_, help_text) in _BUILTINS.items()}

    def own_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _BUILTINS:
            return None
        module_name, _, attr = _BUILTINS[cmd_name][0].partition(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command


def _spoken(key: str) -> str:
    """A command's dotted path as it is typed: ``plugins.install`` -> ``plugins install``."""
    return key.replace(".", " ")


def _not_provided(ctx: click.Context, key: str) -> None:
    """No enabled plugin provides command ``key``: None (click's "no such command"), or one
    line naming the installed plugin that would provide it once enabled, or, for the
    plugin manager's commands, the distribution to install."""
    from hermes_kernel.plugins.missing import turn_on

    app = app_of(ctx)
    wanted = (_command_kind(), key)
    for record in app.host.records:
        if wanted in record.declares:
            reason = app.host.decision(record.name).reason
            raise click.ClickException(
                f"`hermes {_spoken(key)}` comes from plugin {record.name!r} "
                f"({record.distribution}), which is disabled ({reason}); "
                f"{turn_on(record.name, reason)}"
            )
    if key in _MANAGING:
        raise click.ClickException(
            f"`hermes {_spoken(key)}` comes from the plugin manager, which is not installed: "
            f"install {PLUGIN_MANAGER} (pip install {PLUGIN_MANAGER}, in the environment "
            "Hermes runs in)"
        )


def builtin_help(described: str) -> str:
    """A kernel command's line in ``hermes --help``: what it does, then that it is built in
    (so that every line says where its command comes from)."""
    return f"{described.removesuffix('.')} (built in)"


def plugin_command_help(described: str, plugin: str) -> str:
    """A plugin command's line in ``hermes --help``: what it does, then whose it is."""
    if described.endswith(".") and not described.endswith(".."):
        described = described[:-1]  # the plugin's name ends the sentence
    return f"{described} (plugin {plugin})" if described else f"(plugin {plugin})"


def _write_rows(formatter: click.HelpFormatter, rows: list[tuple[str, str]]) -> None:
    """``formatter.write_dl``, except that no line breaks inside a hyphenated word: a
    plugin's name (memory-builtin) stays whole, to be typed as it is shown."""
    import textwrap

    column = min(max(len(name) for name, _ in rows), 30) + 2
    indent = " " * formatter.current_indent
    width = max(formatter.width - formatter.current_indent - column, 10)
    for name, text in rows:
        lines = textwrap.wrap(text, width, break_on_hyphens=False)
        if len(name) + 2 > column:  # a name wider than the column: its text below it
            formatter.write(f"{indent}{name}\n")
        else:
            formatter.write(f"{indent}{name:<{column}}{lines.pop(0) if lines else ''}\n")
        formatter.write("".join(f"{indent}{'':<{column}}{line}\n" for line in lines))


def command_context(app: App) -> CommandContext:
    """What a plugin's command gets (``ctx.meta[COMMAND_CONTEXT]``) of this invocation."""
    from hermes_sdk.events import CommandContext

    settings = app.settings
    return CommandContext(
        home=str(settings.home),
        config=settings.raw,
        provided=app.host.shared(lazily=True),
        secrets=settings.secrets.merged(),
        open_runtime=lambda options=None: _command_runtime(app, options),
        open_archive=lambda home: command_archive(app, home),
        before_exit=app.close,
        log_to=app.use_log,
        open_history=lambda: _command_history(app),
        config_path=str(settings.config_path),
        plugins=lambda: _plugin_states(app),
        set_plugin_enabled=lambda name, enabled: _set_plugin_enabled(app, name, enabled),
        edit_config=_config_editor(),
    )


def _config_editor() -> Callable[[Callable[[MutableMapping[str, Any]], None]], None]:
    """``CommandContext.edit_config``: config.yaml changed in place, checked as ``hermes
    config set`` checks it, one line when refused."""

    def edit(change: Callable[[MutableMapping[str, Any]], None]) -> None:
        from hermes_kernel.cli.config_check import config_validator
        from hermes_kernel.config.edit import edit_config
        from hermes_kernel.config.errors import ConfigError

        app = app_of(click.get_current_context())
        try:
            edit_config(app.settings.config_path, change, config_validator(app))
        except ConfigError as exc:
            raise click.ClickException("; ".join(exc.problems)) from None

    return edit


def _plugin_states(app: App) -> list[PluginState]:
    from hermes_kernel.runtime.status import plugin_states

    return plugin_states(app.host, app.settings.home)


def _set_plugin_enabled(app: App, name: str, enabled: bool) -> None:
    from hermes_kernel.config.errors import ConfigError
    from hermes_kernel.runtime.plugin_toggle import toggle_plugin

    try:
        toggle_plugin(app, name, enabled)
    except ConfigError as exc:
        raise click.ClickException("; ".join(exc.problems)) from None


@contextlib.contextmanager
def command_archive(app: App, home: str) -> Iterator[SessionArchive]:
    """A home's store, for a command that imports history into it; paired users go to the
    plugin that keeps chat access (``hermes_admit_chat_users``)."""
    from hermes_kernel.plugins.store_engines import open_database
    from hermes_kernel.store.archive import StoreArchive
    from hermes_kernel.store.errors import StoreError

    try:
        db = open_database(app.host, Path(home))
    except StoreError as exc:
        raise OSError(str(exc)) from None
    try:
        yield StoreArchive(db, lambda users: app.host.admit_chat_users(home, users))
    finally:
        db.close()


@contextlib.asynccontextmanager
async def _command_runtime(app: App, options: RuntimeOptions | None) -> AsyncIterator[Runtime]:
    """A front-end command's runtime; no usable model is one line (ClickException)."""
    from hermes_kernel.runtime.standalone import RuntimeUnavailable, open_runtime

    try:
        async with open_runtime(app, options) as runtime:
            yield runtime
    except RuntimeUnavailable as exc:  # raised on the way in only
        raise click.ClickException(str(exc)) from None


@contextlib.asynccontextmanager
async def _command_history(app: App) -> AsyncIterator[SessionHistory]:
    """The stored sessions of this home, for a command that reads or tidies them: no agent
    is built, so no model is needed (a StoreError, such as a foreign store, is one line
    from :func:`main`)."""
    from hermes_kernel.runtime.history import open_history

    async with open_history(app.host, app.settings.home, app.settings.raw) as history:
        yield history


def _provider_kind() -> Kind:
    from hermes_sdk import Kind

    return Kind.PROVIDER


def _command_kind() -> Kind:
    from hermes_sdk import Kind

    return Kind.COMMAND


@click.group(
    cls=_TopGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the versions and exit.",
)
@click.option(
    "--home",
    type=click.Path(file_okay=False),
    envvar=None,
    help="Use this HERMES_HOME (default: $HERMES_HOME or ~/.hermes).",
)
@click.option(
    "-p",
    "--profile",
    metavar="NAME",
    help="Use the named profile in HERMES_HOME/profiles/NAME.",
)
@click.option(
    "--safe-mode", is_flag=True, help="Load no plugins except those named in HERMES_LOAD_PLUGINS."
)
@click.option(
    "--strict-plugins",
    is_flag=True,
    help="Fail when a plugin fails to load (for plugin developers).",
)
@click.option("-v", "--verbose", is_flag=True, help="Show debug logs and plugin tracebacks.")
@click.option(
    "-z", "oneshot", metavar="TEXT", help="Ask once and print the reply (hermes chat -q TEXT)."
)
@click.option(
    "-c",
    "--continue",
    "continue_last",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[NAME]",
    help="Go on with the last session, or the one titled NAME (hermes chat --continue).",
)
@click.option(
    "-r",
    "--resume",
    metavar="ID",
    help="Go on with this session, by id, prefix or title (hermes chat -r).",
)
@click.option("-m", "--model", "model", metavar="MODEL", help="Chat with this model.")
@click.option("-t", "--toolsets", "toolsets", metavar="A,B", help="Give only these toolsets.")
@click.option(
    "-s", "preload", metavar="A,B", help="Load these from the start (the default command's -s)."
)
@click.pass_context
def cli(
    ctx: click.Context,
    /,
    oneshot: str | None,
    continue_last: str | None,
    resume: str | None,
    model: str | None,
    toolsets: str | None,
    preload: str | None,
    **_options: Any,
) -> None:
    """Hermes: a personal AI agent runtime built from plugins.

    Without a command: the default command a front-end plugin provides (an interactive
    session; with none installed, what to install).
    """
    chosen = {"model": model, "toolsets": toolsets, "preload": preload}
    if continue_last and _get_command(ctx, continue_last) is not None:
        # `hermes -c plain`: -c is a flag here, before a command (a title of that very
        # name is still reached with -r)
        raise click.UsageError(_alone(continue_last))
    if ctx.invoked_subcommand is not None:
        given_any = continue_last is not None or resume is not None or oneshot is not None
        if given_any or any(value is not None for value in chosen.values()):
            raise click.UsageError(_alone(ctx.invoked_subcommand))
        return
    if continue_last:  # -c NAME: the session of that title (or id)
        if resume is not None:
            raise click.UsageError("use -c NAME or -r ID, not both")
        resume, continue_last = continue_last, None
    if resume is not None and not resume.strip():
        raise click.UsageError(
            "-r needs a session's id, or the start of one (hermes sessions list)"
        )
    from hermes_kernel.cli.overview import print_overview

    # `hermes` alone runs the default command a front-end declares (the terminal chat's, in
    # the standard bundle), and `-z TEXT` asks it once through its question parameter.
    name = _default_command(ctx)
    command = cli.lookup(ctx, name) if name is not None else None
    if command is None or not app_of(ctx).host.declared(_provider_kind()):
        if oneshot is not None or continue_last is not None or resume:
            refusal = (
                "-z cannot ask"
                if oneshot is not None
                else "-c cannot go on"
                if continue_last is not None
                else "-r cannot resume"
            )
            raise click.ClickException(f"{refusal}: {_missing(ctx, name, command)}")
        print_overview(app_of(ctx), _missing(ctx, name, command))
        return
    given: dict[str, Any] = {}
    if oneshot is not None:
        given[_parameter(ctx, name, "ask_parameter", "-z cannot ask", "takes no question")] = (
            oneshot
        )
    if continue_last is not None:
        given[_parameter(ctx, name, "continue_parameter", "-c cannot go on", _NO_SESSIONS)] = True
    if resume is not None:
        given[_parameter(ctx, name, "resume_parameter", "-r cannot resume", _NO_SESSIONS)] = resume
    for option, value in chosen.items():
        if value is not None:
            flag = {"model": "-m", "toolsets": "-t", "preload": "-s"}[option]
            parameter = _parameter(ctx, name, f"{option}_parameter", f"{flag} cannot", _NO_CHOICE)
            given[parameter] = _typed(command, parameter, value)
    ctx.invoke(command, **given)


def _alone(command: str) -> str:
    return (
        f"-z, -c, -r, -m, -t and -s go with `hermes` alone; `hermes {command}` takes its "
        "own options (see its --help)"
    )


def _get_command(ctx: click.Context, name: str) -> click.Command | None:
    try:
        return cli.get_command(ctx, name)
    except click.ClickException:
        return None


def _typed(command: click.Command, parameter: str, value: str) -> Any:
    """``value`` as the default command's parameter takes it (a repeated option: a tuple)."""
    for param in command.params:
        if param.name == parameter and param.multiple:
            return (value,)
    return value


def _default_command(ctx: click.Context) -> str | None:
    """The command a plugin declares as the default (``default_command.NAME``, from
    metadata); the first by plugin name when several do."""
    from hermes_sdk import Kind

    declared = app_of(ctx).host.declared(Kind.DEFAULT_COMMAND)
    found = sorted(declared, key=lambda name: (declared[name][0].name, name))
    return found[0] if found else None


_NO_SESSIONS = "goes on with no earlier session"
_NO_CHOICE = "takes no such choice"


def _parameter(ctx: click.Context, name: str | None, field: str, refusal: str, lacking: str) -> str:
    """The default command's parameter a top-level flag goes to, as its spec names it
    (``ask_parameter`` for ``-z``, ``continue_parameter`` for ``-c``, ``resume_parameter``
    for ``-r``)."""
    from hermes_sdk import CommandSpec

    provided = app_of(ctx).host.require(_command_kind(), name or "")
    spec = provided.spec if provided is not None else None
    parameter = getattr(spec, field, "") if isinstance(spec, CommandSpec) else ""
    command = cli.get_command(ctx, name or "")
    if parameter and command is not None and parameter not in {p.name for p in command.params}:
        raise click.ClickException(
            f"the plugin's `hermes {name}` names {field}={parameter!r}, which it does not "
            "take: update that plugin, or run it by name"
        )
    if not parameter:
        raise click.ClickException(
            f"{refusal}: the default command `hermes {name}` {lacking}; run `hermes {name}` instead"
        )
    return str(parameter)


def _missing(ctx: click.Context, name: str | None, command: click.Command | None) -> str:
    """What is missing before ``hermes`` can start a session: an enabled plugin that
    provides a default command, one that provides a model, or both."""
    wanted = []
    if name is None:
        wanted.append("a default command (a front-end)")
    elif command is None:
        wanted.append(f"`hermes {name}`, the default command")
    if not app_of(ctx).host.declared(_provider_kind()):
        wanted.append("a model provider")
    return f"no enabled plugin provides {' or '.join(wanted)}"


def _skip_httpx_command_line() -> None:
    """httpx's ``__init__`` imports its own command-line module, and with it click's and
    rich's widgets and pygments (~35 ms of every start-up; encode/httpx#3547). Hermes never
    runs httpx's command line, so that module is a stub in this process."""
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    import types

    def unavailable(*_args: object, **_kwargs: object) -> None:
        raise SystemExit("httpx's command line is not loaded inside hermes; run `httpx` itself")

    stub = types.ModuleType("httpx._main", "a stand-in: hermes does not load httpx's CLI")
    stub.main = unavailable  # type: ignore[attr-defined]  # the one name httpx imports
    sys.modules["httpx._main"] = stub


def main() -> None:
    """Console entry point: run the CLI, turning fixable errors into one line and exit 1."""
    from hermes_kernel.config.errors import ConfigError

    _skip_httpx_command_line()

    try:
        # Not standalone: click would turn our own errors into tracebacks. It returns the
        # exit code of ctx.exit(), or the command's return value (None) otherwise.
        result = cli.main(prog_name="hermes", standalone_mode=False)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except ConfigError as exc:
        for problem in exc.problems:
            click.echo(f"hermes: error: {problem}", err=True)
        sys.exit(1)
    except Exception as exc:
        from hermes_kernel.plugins.host import PluginLoadError
        from hermes_kernel.store.errors import StoreError

        if isinstance(exc, PluginLoadError):
            click.echo(f"hermes: error: {exc} (strict mode)", err=True)
            sys.exit(1)
        if isinstance(exc, StoreError):  # the store unusable (foreign, damaged, locked, no engine)
            click.echo(f"hermes: error: {_store_problem(exc)}", err=True)
            sys.exit(1)
        raise
    sys.exit(result if isinstance(result, int) else 0)


def _store_problem(exc: Exception) -> str:
    """The line for a store we cannot use; another tool's, when an importer knows it,
    says whose and how to import it."""
    from hermes_kernel.foreign_homes import recognize_home
    from hermes_kernel.store.errors import ForeignStoreError

    if isinstance(exc, ForeignStoreError):
        found = recognize_home(Path(exc.where).parent)
        if found is not None:
            return found.line
    return str(exc)


def run() -> None:
    """The ``hermes`` console script: :func:`main` in a process that skips Python's own
    start-up and shutdown costs (:mod:`hermes_kernel.process`)."""
    from hermes_kernel import process

    process.starting()
    try:
        main()
    except SystemExit as exc:
        process.leave(process.exit_status(exc))
    process.leave(0)


if __name__ == "__main__":
    run()
