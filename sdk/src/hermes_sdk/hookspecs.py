"""Every hook a Hermes plugin can implement. This module is the contract.

Hooks come in two groups:

* **Registration hooks** (``hermes_providers`` ... ``hermes_config_sections``) take no
  arguments and yield spec objects from :mod:`hermes_sdk.specs`. The kernel calls each
  plugin's registration hooks once, right after importing it and under the load deadline, so
  they must be cheap and must not do I/O. What they yield should match what the plugin's
  distribution declares in its ``hermes.provides`` entry points (see the author guide).
* **Contribution hooks** (``hermes_prompt_sections``, ``hermes_check_command``,
  ``hermes_status_lines``, ``hermes_doctor_checks``, ``hermes_import_home``) add to what
  the kernel builds or decides; a failing one is logged and skipped (``hermes status``,
  ``hermes doctor`` and ``hermes import`` show it as one line naming the plugin).
* **Lifecycle hooks** (``hermes_on_session_start`` ... ``hermes_post_tool_call``) observe a
  session as it runs. They return nothing. A lifecycle hook that raises is logged and skipped:
  it never fails the turn, and the other plugins' hooks still run.

Every contribution and lifecycle hook call runs in a worker thread, never on the agent's
event loop, under ``plugins.hook_timeout_seconds`` (5 s by default): one that misses it is
abandoned and logged, and after 3 misses the plugin is disabled for the process. ``SystemExit``
and ``KeyboardInterrupt`` are contained like any exception. Calls may overlap (two gateway
conversations): guard shared state with a lock. In a plugin listed in ``plugins.isolated``
the same hooks run in its host process, with their arguments and results pickled.

No hook is first-result: every implementation is called, in pluggy order (``tryfirst`` /
``trylast`` are honoured; hook wrappers are not supported). The docs' hook reference is
generated from the docstrings below; each says when the hook is called, with what, what to
return and a short example.
"""

# Hook specs are declarations: their bodies are docstrings, which is what mypy's empty-body
# check flags for functions with a return type.
# mypy: disable-error-code="empty-body"

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hermes_sdk._markers import hookspec
from hermes_sdk.events import (
    LLMCall,
    LLMResult,
    PromptContext,
    PromptSection,
    SessionInfo,
    ToolCall,
    ToolResult,
    TurnInfo,
)
from hermes_sdk.health import Finding, HealthContext, StatusLine
from hermes_sdk.importing import HomeImport, ImportSection
from hermes_sdk.specs import (
    BackendSpec,
    CommandRulesSpec,
    CommandSpec,
    ConfigSectionSpec,
    ContextEngineSpec,
    DashboardPanelSpec,
    DeliverySpec,
    ImporterSpec,
    MemoryProviderSpec,
    ModelRouterSpec,
    PendingWritesSpec,
    PlatformSpec,
    PluginSourceSpec,
    PriceTableSpec,
    ProviderSpec,
    ReviewSpec,
    RungSpec,
    ServiceSpec,
    SkillSourceSpec,
    SlashCommandSpec,
    Spec,
    StoreEngineSpec,
    ToolsetSpec,
    ToolSourceSpec,
    ToolSpec,
    TranscriberSpec,
)

if TYPE_CHECKING:
    from hermes_sdk.archive import PairedUser
    from hermes_sdk.gates import Gate
    from hermes_sdk.storage import StoreSchema

# --- Registration: providers -------------------------------------------------------------


@hookspec
def hermes_providers() -> Iterable[ProviderSpec]:
    """Yield the model providers this plugin offers.

    Called once when the plugin is loaded. Yield one :class:`ProviderSpec` per provider; its
    ``factory`` builds the client only when a turn first uses it. Names are unique across
    plugins: a second plugin yielding a taken name fails to load.

    Manifest key: ``provider.NAME``.

    Example::

        @hookimpl
        def hermes_providers():
            yield ProviderSpec(name="openai", description="OpenAI-compatible APIs",
                               factory=lambda **kw: OpenAIProvider(**kw))
    """


@hookspec
def hermes_provider_rungs() -> Iterable[RungSpec]:
    """Yield rungs of the provider ladder, the chain that picks a session's model.

    Called once when the plugin is loaded. Each :class:`RungSpec` has a unique ``position``
    (lowest first) and a ``resolve(context)`` that returns ``RungResult.match(...)``,
    ``.fail(...)`` or ``.skip(...)`` (see :mod:`hermes_sdk.ladder`); it runs on every start
    of a chat, so it must be quick and must not touch the network. A rung that raises is
    reported as failed by ``hermes model --explain`` and the ladder goes on without it.
    Declare an ``endpoint`` so users can name it in config. For the common case, an API key
    in the environment, ``hermes_sdk.ladder.api_key_rung`` builds the whole rung.

    Manifest key: ``rung.NAME``.

    Example::

        @hookimpl
        def hermes_provider_rungs():
            yield api_key_rung(Endpoint(name="acme", provider="openai",
                                        base_url="https://api.acme.example/v1",
                                        api_key_env="ACME_API_KEY",
                                        default_model="acme-1"), position=550)
    """


@hookspec
def hermes_model_prices() -> Iterable[PriceTableSpec]:
    """Yield price tables used to estimate what model calls cost.

    Called once when the plugin is loaded. Prices are US dollars per million tokens, keyed
    by model name as the provider reports it. A model no table prices is shown as
    "unknown", never as free.

    Manifest key: ``prices.NAME``.

    Example::

        @hookimpl
        def hermes_model_prices():
            yield PriceTableSpec(name="acme", prices={"acme-1": ModelPrice(input=0.5, output=1.5)})
    """


@hookspec
def hermes_model_routers() -> Iterable[ModelRouterSpec]:
    """Yield what picks a session's models: the primary route and its fallbacks.

    Called once when the plugin is loaded. ``factory()`` returns a
    :class:`~hermes_sdk.routing.ModelRouter`, built when a command first needs a model; its
    ``route(request)`` gets a :class:`~hermes_sdk.routing.RouteRequest` (config, keys, and
    what plugins provide: model clients, ladder rungs, price tables) and returns the routes,
    or raises :class:`~hermes_sdk.routing.NoModel` with one line that says what to do. The
    first router by plugin name is used. The standard bundle's is the ``providers`` plugin
    (the provider ladder, credential pools, fallbacks and prices); with no router installed,
    no model can be used and Hermes says what to install.

    Manifest key: ``model_router.NAME``.

    Example::

        @hookimpl
        def hermes_model_routers():
            yield ModelRouterSpec(name="pinned", factory=PinnedRouter)
    """


# --- Registration: store engines ---------------------------------------------------------


@hookspec
def hermes_store_engines() -> Iterable[StoreEngineSpec]:
    """Yield the database engines the state store can be kept in.

    Called once when the plugin is loaded. ``factory(target)`` gets a
    :class:`~hermes_sdk.store_engine.StoreTarget` (the home, ``store.url`` and its password)
    and returns a :class:`~hermes_sdk.store_engine.Database` with the kernel's tables
    migrated, or raises :class:`~hermes_sdk.storage.StoreError` in one line. With
    ``store.url`` unset the engine that declares ``in_home`` is used; with it set, the engine
    whose ``schemes`` hold the URL's scheme. The standard bundle's is ``store-sqlite``
    (state.db in the home); ``store-postgresql`` keeps the store in a shared PostgreSQL. With
    no engine for the home, every command that needs the store fails with one line naming
    what to install: no engine, no state.

    Manifest key: ``store_engine.NAME``.

    Example::

        @hookimpl
        def hermes_store_engines():
            yield StoreEngineSpec(name="duckdb", schemes=("duckdb",), factory=open_duckdb)
    """


# --- Registration: terminal backends -----------------------------------------------------


@hookspec
def hermes_terminal_backends() -> Iterable[BackendSpec]:
    """Yield the terminal backends (environments that run commands and hold files).

    Called once when the plugin is loaded. A backend's ``factory(context)`` gets a
    :class:`~hermes_sdk.terminal.BackendContext` (session, workspace, allow-listed
    environment, the backend's config section) and returns a
    :class:`~hermes_sdk.terminal.TerminalBackend`. It is called on the first tool call that
    needs a backend; the instance is reused for the session and closed when it ends. The
    user picks the backend with ``agent.backend`` (default ``local``).

    Manifest key: ``backend.NAME``.

    Example::

        @hookimpl
        def hermes_terminal_backends():
            yield BackendSpec(name="docker", factory=make_docker_backend)
    """


# --- Registration: platforms ---------------------------------------------------------------


@hookspec
def hermes_platforms() -> Iterable[PlatformSpec]:
    """Yield chat platform adapters for the gateway.

    Called once when the plugin is loaded. ``hermes gateway run`` calls ``factory(context)``
    when it starts that platform, with a :class:`~hermes_sdk.platform.PlatformContext`
    (the ``platforms.NAME`` config section and the secrets); it returns a
    :class:`~hermes_sdk.platform.PlatformAdapter`, or raises
    :class:`~hermes_sdk.platform.PlatformNotConfigured` with what the user must set.
    Identity and authorization belong to the gateway, not to the adapter: an adapter reports
    who wrote, never whether they may. Conformance suite: ``hermes_testkit.PlatformTests``.

    Manifest key: ``platform.NAME``.

    Example::

        @hookimpl
        def hermes_platforms():
            yield PlatformSpec(name="telegram", factory=TelegramAdapter)
    """


# --- Registration: front-ends and services -----------------------------------------------


@hookspec
def hermes_services() -> Iterable[ServiceSpec]:
    """Yield long-running front-ends for the gateway to host beside its platforms.

    Called once when the plugin is loaded. ``hermes gateway run`` builds each enabled
    service (``<section>.enabled: true`` in config.yaml, or ``enabled_by_default``) with a
    :class:`~hermes_sdk.service.ServiceContext` and awaits its ``run(runtime)`` with the
    gateway's :class:`~hermes_sdk.runtime.Runtime`. A service that fails to start, raises or
    returns is reported in ``hermes gateway status`` and restarted with backoff; the rest
    keep running. A front-end that is a command only (``hermes acp``) needs no service: its
    ``hermes_cli_commands`` command opens a runtime with ``CommandContext.open_runtime``.

    Manifest key: ``service.NAME``.

    Example::

        class Echo:
            async def run(self, runtime):
                session = await runtime.open_session(SessionOptions(source="echo"))
                ended = await runtime.start_turn(session.session_id, "hello").result()
                await asyncio.Event().wait()  # serve until cancelled

        @hookimpl
        def hermes_services():
            yield ServiceSpec(name="echo", description="Say hello once.", factory=lambda c: Echo())
    """


@hookspec
def hermes_deliveries() -> Iterable[DeliverySpec]:
    """Yield how messages reach chats for the rest of Hermes: what ``Runtime.deliver`` (a
    scheduled job's result, a front-end's note) goes through.

    Called once when the plugin is loaded. On a runtime's first ``deliver``, the kernel
    calls ``factory(context)`` with a :class:`~hermes_sdk.delivery.DeliveryContext` (the
    home, its config, the runtime's ``plugin_store`` and the installed specs) and awaits the
    returned :class:`~hermes_sdk.delivery.Deliverer`'s ``deliver(platform, chat_id, text)``
    for each message, on the runtime's event loop. Only one delivery serves a process: the
    first by name. With none installed ``deliver`` raises ``DeliveryUnavailable``. The
    gateway yields one: its delivery ledger, sent at once inside the gateway's process and
    within seconds from any other.

    Manifest key: ``delivery.NAME``.

    Example::

        class Outbox:
            def __init__(self, context):
                self.path = Path(context.home) / "outbox.txt"

            async def deliver(self, platform, chat_id, text):
                with self.path.open("a") as out:
                    out.write(f"{platform}:{chat_id} {text}\n")
                return Delivery(delivery_id=1, state="queued")

        @hookimpl
        def hermes_deliveries():
            yield DeliverySpec(name="outbox", factory=Outbox)
    """


# --- Registration: transcribers ----------------------------------------------------------


@hookspec
def hermes_transcribers() -> Iterable[TranscriberSpec]:
    """Yield speech-to-text engines for the audio users send (a voice note).

    Called once when the plugin is loaded. When a message arrives with audio, the kernel
    builds each transcriber once per process, calling ``factory(context)`` with a
    :class:`~hermes_sdk.transcription.TranscriberContext`, and awaits
    ``transcribe(attachment)`` of one after another: those named in ``media.transcribers``
    first, in that order, then the rest by name. The first to return text wins; one that
    raises ``TranscriberUnavailable`` (not set up here) passes to the next. The text is
    stored with the message and stands for the audio from then on.

    Manifest key: ``transcriber.NAME``.

    Example::

        @hookimpl
        def hermes_transcribers():
            yield TranscriberSpec(name="whisper-server", factory=WhisperServer)
    """


# --- Registration: memory providers ------------------------------------------------------


@hookspec
def hermes_memory_providers() -> Iterable[MemoryProviderSpec]:
    """Yield memory providers.

    Called once when the plugin is loaded. Besides the built-in store, at most one external
    memory provider is active; the user picks it with ``memory.provider``. ``factory(context)``
    gets a :class:`~hermes_sdk.memory.MemoryContext` and returns a
    :class:`~hermes_sdk.memory.MemoryProvider`; a provider that fails is dropped with a
    warning and built-in memory carries on.

    Manifest key: ``memory.NAME``.

    Example::

        @hookimpl
        def hermes_memory_providers():
            yield MemoryProviderSpec(name="notebook", factory=Notebook)
    """


# --- Registration: context engines ------------------------------------------------------


@hookspec
def hermes_context_engines() -> Iterable[ContextEngineSpec]:
    """Yield context engines: what a long session's compacted view says about the messages
    it replaces.

    Called once when the plugin is loaded. The kernel decides when to compact (past
    ``compression.threshold`` of the model's window, on a context-overflow error, on
    ``/compact``) and which messages a summary replaces; the engine named by
    ``compression.engine`` writes that summary. ``factory(context)`` gets a
    :class:`~hermes_sdk.context.ContextEngineContext` and returns a
    :class:`~hermes_sdk.context.ContextEngine`; it is built on the first compaction, not at
    start-up. An engine that fails is replaced, for that compaction, by a summary written
    without a model, and the full transcript always stays in the store.

    Manifest key: ``context_engine.NAME``.

    Example::

        @hookimpl
        def hermes_context_engines():
            yield ContextEngineSpec(name="recall", factory=RecallEngine)
    """


# --- Registration: tools and toolsets ----------------------------------------------------


@hookspec
def hermes_toolsets() -> Iterable[ToolsetSpec]:
    """Yield toolsets: named groups of tools that are enabled or disabled together.

    Called once when the plugin is loaded. A tool names its toolset in ``ToolSpec.toolset``.

    Manifest key: ``toolset.NAME``.

    Example::

        @hookimpl
        def hermes_toolsets():
            yield ToolsetSpec(name="web", description="search and fetch web pages")
    """


@hookspec
def hermes_tools() -> Iterable[ToolSpec]:
    """Yield tools the model can call.

    Called once when the plugin is loaded. Each :class:`ToolSpec` carries its JSON schema and
    handler. A handler's exception becomes an error tool result; it never stops the loop.

    Manifest key: ``tool.NAME``.

    Example::

        @hookimpl
        def hermes_tools():
            yield ToolSpec(name="echo", description="repeat text", handler=lambda text: text,
                           parameters={"type": "object",
                                       "properties": {"text": {"type": "string"}}})
    """


@hookspec
def hermes_tool_sources() -> Iterable[ToolSourceSpec]:
    """Yield tool sources: tools known only once something is reached (an MCP server's).

    Called once when the plugin is loaded; like every registration hook it must not do I/O.
    ``factory(context)`` gets a :class:`~hermes_sdk.tool_sources.ToolSourceContext` and
    returns a :class:`~hermes_sdk.tool_sources.ToolSource`. Before a session's first model
    call the kernel awaits every source's ``start()`` together, then offers its ``tools()``
    beside the plugins' own; each of its ``problems()`` is one line to the user. A source
    that raises is reported and left out; the agent carries on without its tools.

    Manifest key: ``tool_source.NAME``.

    Example::

        @hookimpl
        def hermes_tool_sources():
            yield ToolSourceSpec(name="mcp", factory=McpServers)
    """


# --- Registration: skills ------------------------------------------------------------------


@hookspec
def hermes_skill_sources() -> Iterable[SkillSourceSpec]:
    """Yield sources of SKILL.md skills (bundled with a plugin, a user folder, a hub).

    Called once when the plugin is loaded. ``factory()`` returns the folder whose subfolders
    are skills (each with its SKILL.md); it is called when a session's tools or prompt are
    built. These folders are read-only and come after the user's own skills.

    Manifest key: ``skill_source.NAME``.

    Example::

        @hookimpl
        def hermes_skill_sources():
            yield SkillSourceSpec(name="k8s", factory=lambda: Path(__file__).parent / "skills")
    """


# --- Registration: the learning loop --------------------------------------------------


@hookspec
def hermes_reviews() -> Iterable[ReviewSpec]:
    """Yield background reviews: what to look for in a finished conversation, with which
    tools, and when.

    Called once when the plugin is loaded. After a reply is delivered the kernel checks each
    review's ``trigger`` (``"lesson"``: a turn with many tool calls, a recovered failure or
    a user's correction; ``"periodic"``: every ``learning.nudge_every_turns`` user turns)
    and queues the reviews it triggers. One review runs at a time per process, in a session
    of its own (source ``"review"``, a child of the reviewed one) whose prompt ends with the
    review's ``instructions``, with only the tools it names: it can keep what it learns,
    never act on the world. ``learning.review: false`` turns lesson reviews off,
    ``learning.nudge_every_turns: 0`` periodic ones. A review that fails is logged; it never
    surfaces as an error of the turn it looks at.

    Manifest key: ``review.NAME``.

    Example::

        @hookimpl
        def hermes_reviews():
            yield ReviewSpec(
                name="glossary", trigger="periodic",
                instructions="Add the terms the user defined to the glossary, or say NOTHING.",
                tools={"glossary_add"}, keeps_with={"glossary_add"},
            )
    """


@hookspec
def hermes_importers() -> Iterable[ImporterSpec]:
    """Yield importers: ``hermes import NAME [PATH]`` brings another tool's home over.

    Called once when the plugin is loaded (``hermes import`` loads only the plugins that
    declare ``importer.NAME``). An :class:`ImporterSpec`'s ``factory()`` builds the
    :class:`~hermes_sdk.importing.Importer` when the command runs. The kernel owns the
    command: ``--yes``, ``--dry-run``, ``--details``, ``--json``, the preview, the question
    and the report are the same for every importer. The importer brings what belongs to no
    plugin (settings, secrets, sessions through ``request.open_archive``) and passes each
    home to ``request.import_parts``, so every plugin brings its own files over
    (``hermes_import_home``). Names are unique: a second plugin with a taken name fails to
    load. ``hermes import`` with an unknown NAME lists the installed ones.

    Manifest key: ``importer.NAME``.

    Example::

        @hookimpl
        def hermes_importers():
            yield ImporterSpec(name="openclaw", description="an OpenClaw home",
                               default_path="~/.openclaw", factory=OpenClawImporter)
    """


@hookspec
def hermes_plugin_sources() -> Iterable[PluginSourceSpec]:
    """Yield sources of plugins written for another agent, which run here as Hermes plugins.

    Called once when the plugin is loaded, which happens only when the kernel first needs
    a source. A :class:`PluginSourceSpec`'s ``factory()`` builds a
    :class:`~hermes_sdk.plugin_sources.PluginSource`; its ``find(query)`` returns
    :class:`~hermes_sdk.plugin_sources.ForeignPlugin` records. The kernel asks only when a
    name no Hermes plugin has is wanted (``plugins.enabled``, a ``memory.provider``) or when
    it lists every plugin (``hermes plugins list``, ``enable``, ``disable``, ``info``). Each
    found plugin is then loaded like a Hermes plugin: under the load deadline, in a host
    process of its own when ``plugins.isolated`` names it, listed with its origin, switched
    off for missing hook deadlines. A name a Hermes plugin already has is refused.

    Manifest key: ``plugin_source.NAME``, required: the kernel imports only the plugins that
    declare a source when it looks for foreign plugins (a listing imports nothing else).

    Example::

        @hookimpl
        def hermes_plugin_sources():
            yield PluginSourceSpec(name="other-agent", description="Other Agent's plugins",
                                   factory=OtherAgentPlugins)
    """


@hookspec
def hermes_pending_writes() -> Iterable[PendingWritesSpec]:
    """Yield queues of writes that wait for the user's approval: what the agent changed
    while ``write_approval`` was on (a memory entry, a skill edit), for every front-end to
    show and decide.

    Called once when the plugin is loaded. When a front-end asks (``Runtime.pending_writes``,
    ``Runtime.decide_pending_write``) the kernel calls ``factory(context)`` with a
    :class:`~hermes_sdk.pending_writes.PendingContext` (the home, its config and whose
    writes: ``user_scope``, None for the owner) and calls the returned
    :class:`~hermes_sdk.pending_writes.PendingWrites`' ``pending()``, ``approve(id)`` or
    ``reject(id)``, each in a worker thread under ``plugins.hook_timeout_seconds``. Each
    :class:`~hermes_sdk.pending_writes.PendingWrite` carries one line saying what approving
    does and a unified diff of the files it would change. ``approve`` and ``reject`` return
    one line to show, raise :class:`~hermes_commons.proposals.UnknownProposal` for an id that is
    not waiting, and ``approve`` raises ValueError (one line) when the write cannot be made,
    leaving it pending. A queue whose ``pending()`` raises or hangs is left out of the list
    (logged, and named in ``Runtime.warnings``); the other queues are still shown. Names are
    unique: a second plugin with a taken name fails to load.

    Manifest key: ``pending.NAME``.

    Example::

        class Glossary:
            def __init__(self, context):
                self.queue = ProposalQueue(Path(context.home) / "glossary" / "pending",
                                           "glossary entry", "hermes glossary pending")

            def pending(self):
                return [PendingWrite(queue="glossary", id=p.id, title=f"add {p.payload['term']}",
                                     diff="", created_at=p.created_at, source=p.source)
                        for p in self.queue.pending()]

            def approve(self, write_id):
                add_term(self.queue.get(write_id).payload)  # UnknownProposal if not waiting
                self.queue.drop(write_id)
                return f"approved {write_id}"

            def reject(self, write_id):
                self.queue.get(write_id)
                self.queue.drop(write_id)
                return f"rejected {write_id}"

        @hookimpl
        def hermes_pending_writes():
            yield PendingWritesSpec(name="glossary", description="new terms", factory=Glossary)
    """


@hookspec
def hermes_dashboard_panels() -> Iterable[DashboardPanelSpec]:
    """Yield pages of the dashboard: what this plugin owns, shown and controlled from the
    web UI (scheduled jobs, the gateway's pairings, the skills hub ...).

    Called once when the plugin is loaded. A front-end lists the panels with
    ``Runtime.panels()`` (the plugins that declare ``panel.NAME`` are imported then) and
    opens one with ``Runtime.panel(name)``, which calls ``factory(context)`` once with a
    :class:`~hermes_sdk.dashboard.PanelContext` (the home, its config and secrets, the
    front-end's runtime). The :class:`~hermes_sdk.dashboard.Panel` says what to show as
    typed blocks (``view``) and does what a button or form asks (``act``); the front-end
    draws them and guards every request (login, CSRF, the Host header), so a panel writes
    no HTML and checks no token. The methods are coroutines run on the front-end's event
    loop (blocking work goes to a thread), each under the front-end's deadline (the web
    UI's ``web_ui.panel_seconds`` for ``view``, ``web_ui.action_seconds`` for ``act``); one
    that raises or misses it is shown as one line, and the other pages still work. Names
    are unique and become the page's address (``/panels/NAME``).

    Manifest key: ``panel.NAME``.

    Example::

        class Greeting:
            def __init__(self, context):
                self.home = context.home

            async def view(self, query):
                return PanelView(sections=(Section(title="Hello", blocks=(
                    Text(text=f"this home is {self.home}"),)),))

            async def act(self, action, values):
                raise PanelError(f"no action {action!r} here")

        @hookimpl
        def hermes_dashboard_panels():
            yield DashboardPanelSpec(name="hello", title="Hello", description="a greeting",
                                     factory=Greeting)
    """


# --- Registration: CLI and configuration -------------------------------------------------


@hookspec
def hermes_cli_commands() -> Iterable[CommandSpec]:
    """Yield ``hermes`` subcommands.

    Called once when the plugin is loaded. The kernel lists declared commands in
    ``hermes --help`` from metadata alone, each with the line the plugin's help file gives it
    (:mod:`hermes_commons.help_file`: the spec's ``description``), and imports the plugin only
    when its command runs.
    A command may not reuse a built-in name (``plugins``, ``config``, ``doctor``, ...). Named
    ``GROUP.NAME``, it is a subcommand of one of the kernel's command groups (``plugins``,
    ``config``, ``tools``, ``profile``, ``store``) or of another plugin's group
    (``gateway.install`` is ``hermes gateway install``; ``GROUP.SUB.NAME`` for a group inside
    it): ``plugins.install`` is ``hermes plugins install``; the group's own subcommands win,
    and ``plugins.list``, ``plugins.info``,
    ``plugins.enable`` and ``plugins.disable`` are reserved, so a broken install can always be
    repaired. The running command finds a :class:`~hermes_sdk.events.CommandContext` in
    ``click.get_current_context().meta[COMMAND_CONTEXT]``: the home, its config and secrets,
    ``open_runtime()`` for a front-end, ``open_history()`` for a command that only reads or tidies
    the stored sessions (no model needed), and ``open_archive(home)`` for an importer that writes
    sessions from another tool into a store (:mod:`hermes_sdk.archive`).

    A front-end's session command may be the default (``default=True``, and
    ``default_command.NAME`` in the manifest): ``hermes`` alone runs it, and the top-level
    ``-z TEXT``, ``-c`` and ``-r ID`` reach the parameters its spec names
    (``ask_parameter``, ``continue_parameter``, ``resume_parameter``).

    Manifest key: ``command.NAME`` (``command.GROUP.NAME`` for a group's subcommand).

    Example::

        @hookimpl
        def hermes_cli_commands():
            def build():
                import click

                @click.command(help="Say hello.")
                def hello():
                    click.echo("hello")
                return hello
            yield CommandSpec(name="hello", description="Say hello.", factory=build)
    """


@hookspec
def hermes_slash_commands() -> Iterable[SlashCommandSpec]:
    """Yield ``/NAME`` commands for every front-end (the terminal chat, the web UI, chat
    platforms through the gateway when ``on_platforms``).

    Called once when the plugin is loaded (a front-end loads plugins that declare
    ``slash.NAME`` when it first lists commands). The runtime serves them beside its own
    built-ins through ``Runtime.run_slash``; every front-end's ``/help`` lists them. A name
    a built-in command uses is refused with a warning; the built-in keeps it. A handler
    returns text, None, or a :class:`~hermes_sdk.slash.SlashReply`.

    Manifest key: ``slash.NAME``.

    Example::

        @hookimpl
        def hermes_slash_commands():
            def weather(args, context):
                return f"no weather for {args or 'here'} in session {context.session_id}"
            yield SlashCommandSpec(name="weather", description="Show weather.", handler=weather)
    """


@hookspec
def hermes_config_sections() -> Iterable[ConfigSectionSpec]:
    """Yield the ``config.yaml`` sections this plugin owns.

    Called once when the plugin is loaded. The kernel validates the section with ``model``
    (a pydantic model, or a function returning one, so pydantic is imported only when the
    section is checked) and reports errors with file, line and key. Section names share one
    namespace with the kernel's own (``plugins``), which plugins cannot claim.

    Manifest key: ``config.NAME``.

    Example::

        class TelegramConfig(BaseModel):
            allowed_users: list[int] = []

        @hookimpl
        def hermes_config_sections():
            yield ConfigSectionSpec(name="telegram", model=TelegramConfig)
    """


# --- Contributions: the system prompt --------------------------------------------------


@hookspec
def hermes_prompt_sections(context: PromptContext) -> Iterable[PromptSection]:
    """Yield blocks to put in the system prompt of a new session.

    Called once when a session is created, never on resume: the prompt is built once and
    frozen so that provider prompt caches hold. Memory snapshots and the skills index come
    through this hook. Keep blocks short; a hook that raises is logged and skipped.

    Manifest key: ``hook.hermes_prompt_sections``.

    Example::

        @hookimpl
        def hermes_prompt_sections(context):
            yield PromptSection(title="Team conventions", text="Use metric units.")
    """


# --- Registration: the rules the approval gate asks -----------------------------------


@hookspec
def hermes_command_rules() -> Iterable[CommandRulesSpec]:
    """Yield rule sets that judge every shell command a tool runs, and every file a file
    tool writes (judged as ``: > PATH``).

    Called once when the plugin is loaded. ``factory()`` returns a
    :class:`~hermes_sdk.approvals.CommandRules` and is called at the first command checked.
    Each command goes to every installed rule set and the strictest
    :class:`~hermes_sdk.approvals.Verdict` wins; the kernel's gate then applies the user's
    ``approvals`` settings (``deny`` globs, ``mode``, ``allow`` rules, asking the user).
    A ``BLOCK`` is never lifted, a ``guarded`` ask is never lifted, and a rule set that
    raises makes that command refused; a plugin that declares rules and fails to load
    (a name another plugin took first included) closes the gate. With no rule set
    installed, every command and file write is refused with one line that says what to
    install. The standard bundle's rules
    are the ``approvals`` plugin; replace them by disabling it and installing yours.

    Manifest key: ``command_rules.NAME``.

    Example::

        @hookimpl
        def hermes_command_rules():
            yield CommandRulesSpec(name="strict", factory=StrictRules)
    """


# --- Contributions: the safety checks -----------------------------------------------------


@hookspec
def hermes_check_command(command: str, normalized: str, backend: str) -> str | None:
    """Judge a shell command before a backend runs it: return ``"ask: REASON"`` to make
    the user approve it, ``"deny: REASON"`` to refuse it, or None to have no opinion.

    Called for every command a tool runs, beside the installed command rules, with the command as
    written, its normalized form (quotes, escapes, ``sudo``, ``env`` prefixes and ``sh -c``
    wrappers removed, lower-cased) and the backend's name. A plugin can make things
    stricter, never looser: the strictest answer wins, and the user's own ``approvals.deny``
    and the rules' hardline floor always apply. Keep it fast (it runs on every command); a
    hook that raises is logged and skipped.

    Manifest key: ``hook.hermes_check_command``.

    Example::

        @hookimpl
        def hermes_check_command(command, normalized, backend):
            if "kubectl delete" in normalized:
                return "ask: deletes cluster resources"
            return None
    """


# --- Contributions: hermes status and hermes doctor --------------------------------------


@hookspec
def hermes_status_lines(context: HealthContext) -> Iterable[StatusLine]:
    """Yield this plugin's lines for ``hermes status``: how its part of this home stands, at
    a glance (a scheduler's jobs, an MCP client's servers, a gateway's platforms).

    Called by ``hermes status`` only, which imports just the plugins whose manifest declares
    this hook. ``context`` is a :class:`~hermes_sdk.health.HealthContext`: the home, config
    and secrets. Read your own files and your own config section; never another plugin's.
    Keep it cheap: no network, no servers started, no heavy imports. The kernel's own lines
    (home, model, plugins) come first, then every contribution sorted by label, then
    sessions and disk. A hook that raises or misses ``plugins.hook_timeout_seconds`` is
    shown as one line naming the plugin; the rest of the screen is unaffected.

    Manifest key: ``hook.hermes_status_lines``.

    Example::

        @hookimpl
        def hermes_status_lines(context):
            notes = list(Path(context.home, "notes").glob("*.md"))
            yield StatusLine(label="Notes", text=f"{len(notes)} kept",
                             details=tuple(p.stem for p in notes[:3]))
    """


@hookspec
def hermes_doctor_checks(context: HealthContext) -> Iterable[Finding]:
    """Yield this plugin's findings for ``hermes doctor``: what is right, and what is wrong
    with its files, its config section or what it needs outside Hermes (a program on PATH,
    a key in .env), each wrong one with the fix.

    Called by ``hermes doctor`` only, after every plugin has loaded and every config
    section is validated (so do not repeat a section's validation errors). ``context`` is a
    :class:`~hermes_sdk.health.HealthContext`. Yield :class:`~hermes_sdk.health.Finding`
    objects; an ``"error"`` makes ``hermes doctor`` exit 1. It may take a moment (a file
    read, a look along PATH), never a network call. A hook that raises or misses
    ``plugins.hook_timeout_seconds`` is one error finding naming the plugin.

    Manifest key: ``hook.hermes_doctor_checks``.

    Example::

        @hookimpl
        def hermes_doctor_checks(context):
            if shutil.which("git") is None:
                yield Finding(level="warning", message="git is not on PATH",
                              fix="install git, e.g.: apt install git")
    """


@hookspec
def hermes_import_home(request: HomeImport) -> Iterable[ImportSection]:
    """Bring this plugin's own files over from another tool's home, for ``hermes import``.

    Called by an importer (through ``ImportRequest.import_parts``) once per home it brings
    over (the base home, then each profile), with a :class:`~hermes_sdk.importing.HomeImport`:
    the kind of home (``source_kind``, e.g. ``"hermes-agent"``), its path, the target home,
    the target's config and ``dry_run``. Yield nothing for a kind of home you do not know.
    Otherwise read only the source, write only your own files in the target, in your own
    format and under your own locks, and only what the target lacks (a second run brings
    only what is new); yield one :class:`~hermes_sdk.importing.ImportSection` per kind of
    thing, listing the source's top-level names you covered in ``reads``. In a dry run
    write nothing. It may take a while (files are copied): the deadline is the longer of
    ``plugins.hook_timeout_seconds`` and 300 s. A hook that raises is reported as a section
    naming the plugin, and the rest of the import goes on.

    Manifest key: ``hook.hermes_import_home``.

    Example::

        @hookimpl
        def hermes_import_home(request):
            if request.source_kind != "hermes-agent":
                return
            section = ImportSection(kind="notes", reads=["notes"])
            for path in sorted(Path(request.source, "notes").glob("*.md")):
                mine = Path(request.target, "notes", path.name)
                if mine.exists():
                    section.skip(path.name, "already there")
                    continue
                section.add(path.name)
                if not request.dry_run:
                    mine.parent.mkdir(parents=True, exist_ok=True)
                    mine.write_bytes(path.read_bytes())
            yield section
    """


# --- Contributions: chat access ----------------------------------------------------------


@hookspec
def hermes_admit_chat_users(home: str, users: Sequence[PairedUser]) -> Iterable[PairedUser]:
    """Let these chat-platform users in, as the owner approving their pairing would: an
    importer brought them from another tool (``SessionArchive.add_paired``).

    Called by the command that imports, with the home written into (this home or a
    profile's) and the users. The plugin that keeps who may write to the agent (the
    gateway) stores them and yields those that were not let in before. With no plugin
    implementing it, ``add_paired`` raises OSError saying nothing keeps chat access.

    Manifest key: ``hook.hermes_admit_chat_users``.

    Example::

        @hookimpl
        def hermes_admit_chat_users(home, users):
            with open_store(home, SCHEMA) as store:
                yield from Pairings(store).admit(users)
    """


@hookspec
def hermes_store_schemas() -> Iterable[StoreSchema]:
    """Yield the :class:`~hermes_sdk.storage.StoreSchema` of each set of tables this plugin
    keeps in the state store: what ``hermes store migrate`` copies into another store (from
    state.db into PostgreSQL, or back) besides the kernel's own tables. A plugin with
    tables that does not implement it keeps them where they were, and the command names
    them as left behind.

    Called by that command only. Yield the same schema objects the plugin opens its store
    with, its ``postgresql`` migrations included.

    Manifest key: ``hook.hermes_store_schemas``.

    Example::

        @hookimpl
        def hermes_store_schemas():
            yield SCHEMA
    """


# --- Lifecycle: sessions -----------------------------------------------------------------


@hookspec
def hermes_on_session_start(session: SessionInfo) -> None:
    """Observe a session starting (created, or resumed by a new process).

    Called before the session's first turn in this process. Return nothing. Raising is
    logged and ignored.

    Example::

        @hookimpl
        def hermes_on_session_start(session):
            log.info("session %s from %s", session.session_id, session.source)
    """


@hookspec
def hermes_on_session_end(session: SessionInfo, reason: str) -> None:
    """Observe a session ending.

    Called once per session end with ``reason`` (``"exit"``, ``"reset"``, ``"compressed"``,
    ``"error"`` ...). Always paired with an earlier ``hermes_on_session_start``. Return
    nothing. Raising is logged and ignored.

    Example::

        @hookimpl
        def hermes_on_session_end(session, reason):
            flush_notes(session.session_id)
    """


# --- Lifecycle: model calls --------------------------------------------------------------


@hookspec
def hermes_pre_llm_call(call: LLMCall) -> None:
    """Observe a model request about to be sent.

    Called before every model request, including retries and fallbacks. Return nothing.
    Raising is logged and ignored.

    Example::

        @hookimpl
        def hermes_pre_llm_call(call):
            metrics.count("llm_calls", model=call.model)
    """


@hookspec
def hermes_post_llm_call(call: LLMCall, result: LLMResult) -> None:
    """Observe a model request's outcome, success or failure.

    Called after every ``hermes_pre_llm_call``, exactly once, with the same ``call``.
    Return nothing. Raising is logged and ignored.

    Example::

        @hookimpl
        def hermes_post_llm_call(call, result):
            metrics.add("tokens", result.input_tokens + result.output_tokens)
    """


# --- Lifecycle: tool calls ---------------------------------------------------------------


@hookspec
def hermes_pre_tool_call(call: ToolCall) -> None:
    """Observe a tool call about to run.

    Called once per tool call the model makes, right before it runs, in the order the calls
    will run. A call that is then refused (unknown tool, arguments that are not a JSON
    object) still gets its ``hermes_post_tool_call``, with the error result. Return nothing.
    Raising is logged and ignored; it does not stop the tool.

    Example::

        @hookimpl
        def hermes_pre_tool_call(call):
            audit.write(call.tool, dict(call.arguments))
    """


@hookspec
def hermes_tool_gate(call: ToolCall) -> Gate | None:
    """Judge a tool call before it runs: any tool, the model's calls and those a running
    tool makes alike.

    Called after ``hermes_pre_tool_call``, once the arguments fit the tool's schema, in
    plugin order; each gate sees the arguments as the gates before it rewrote them. Return
    ``None`` (no opinion) or a :class:`~hermes_sdk.gates.Gate`: ``Gate.allow(arguments)``
    runs it (with those arguments), ``Gate.ask(reason)`` asks the user first (as an
    approval: nobody to ask, or no answer in time, means no; ``approvals.mode: off`` and
    ``--yolo`` let it run), ``Gate.deny(reason)`` refuses it and tells the model why. The
    strictest answer wins. A gate that raises, misses its deadline, returns anything else,
    or rewrites the arguments into ones the tool's schema refuses **denies** the call: a
    gate that fails never opens, and one switched off for missing its deadlines keeps
    denying until the plugin is fixed or disabled. Shell commands are also judged by the
    command rules and ``hermes_check_command``; a gate adds to those, never lifts them.

    Example::

        @hookimpl
        def hermes_tool_gate(call):
            if call.tool == "memory" and "ignore previous" in str(call.arguments).lower():
                return Gate.deny("that memory looks like an injected instruction")
            return None
    """


@hookspec
def hermes_post_tool_call(call: ToolCall, result: ToolResult) -> None:
    """Observe a tool call's recorded result.

    Called exactly once after every ``hermes_pre_tool_call``, with the same ``call``, after
    the result has been persisted. Return nothing. Raising is logged and ignored.

    Example::

        @hookimpl
        def hermes_post_tool_call(call, result):
            if not result.ok:
                alert(call.tool, result.content[:200])
    """


# --- Per turn: context, transforms and its end ---------------------------------------------


@hookspec
def hermes_turn_context(session: SessionInfo, text: str) -> str | None:
    """Add context to this turn's user message, for the model only.

    Called once per turn, before its first model call, with what the user said. Return a
    block of text (or ``None``): it is appended to the user message the model reads in
    every call of this turn, never to the frozen system prompt, and never stored as the
    user's words (the transcript keeps what they said). Raising or missing the deadline
    adds nothing.

    Example::

        @hookimpl
        def hermes_turn_context(session, text):
            return f"[tasks] {open_tasks(session.session_id)} still open"
    """


@hookspec
def hermes_transform_tool_result(call: ToolCall, result: str) -> str | None:
    """Rewrite a tool's result before the model reads it.

    Called after a call ran (its handler returned or raised), with the result as the model
    would read it (secrets already redacted), before it is stored and before the size
    limits apply. Return the new text, or ``None`` to leave it. Transforms chain in plugin
    order, each seeing the last one's text; one that raises or misses its deadline is
    skipped.

    Example::

        @hookimpl
        def hermes_transform_tool_result(call, result):
            return squeeze_blank_lines(result) if call.tool == "terminal" else None
    """


@hookspec
def hermes_transform_terminal_output(command: str, output: str) -> str | None:
    """Rewrite what a shell command printed, before the tool shortens it.

    Called by the tools that run commands (``terminal``; see
    :attr:`~hermes_sdk.tooling.ToolContext.transform_output`), once for the command's
    standard output and once for its standard error when there is any, with the text as the
    command printed it: before the tool keeps only its start and end, and before secrets
    are redacted from the result (a transform's own text is redacted too). Return the new
    text, or ``None`` to leave it. Transforms chain in plugin order; one that raises or
    misses its deadline is skipped.

    Example::

        @hookimpl
        def hermes_transform_terminal_output(command, output):
            lines = output.splitlines()
            if len(lines) <= 60:
                return None
            return "\n".join([*lines[:20], f"[{len(lines) - 40} lines omitted]", *lines[-20:]])
    """


@hookspec
def hermes_transform_reply(session: SessionInfo, text: str) -> str | None:
    """Rewrite the turn's final reply before it is stored and shown.

    Called once per turn that ends with a reply, with its text. Return the new text, or
    ``None`` to leave it. Transforms chain in plugin order; one that raises or misses its
    deadline is skipped. The reply already streamed as the model wrote it; the stored and
    final reply is the transformed one.

    Example::

        @hookimpl
        def hermes_transform_reply(session, text):
            return text.replace("utilize", "use")
    """


@hookspec
def hermes_on_turn_end(turn: TurnInfo) -> None:
    """Observe a turn ending, whatever its status.

    Called once per turn, after its reply is stored (or it stopped, failed or ran out of
    budget). A turn cancelled from outside (a second Ctrl+C, a shutdown) ends ``stopped``
    with the error ``cancelled``; its call runs on its own then, and may not finish if the
    process is leaving. Return nothing. Raising is logged and ignored.

    Example::

        @hookimpl
        def hermes_on_turn_end(turn):
            metrics.count("turns", status=turn.status)
    """


REGISTRATION_HOOKS: dict[str, type[Spec]] = {
    "hermes_providers": ProviderSpec,
    "hermes_provider_rungs": RungSpec,
    "hermes_model_prices": PriceTableSpec,
    "hermes_model_routers": ModelRouterSpec,
    "hermes_store_engines": StoreEngineSpec,
    "hermes_terminal_backends": BackendSpec,
    "hermes_platforms": PlatformSpec,
    "hermes_services": ServiceSpec,
    "hermes_deliveries": DeliverySpec,
    "hermes_transcribers": TranscriberSpec,
    "hermes_memory_providers": MemoryProviderSpec,
    "hermes_context_engines": ContextEngineSpec,
    "hermes_command_rules": CommandRulesSpec,
    "hermes_toolsets": ToolsetSpec,
    "hermes_tools": ToolSpec,
    "hermes_tool_sources": ToolSourceSpec,
    "hermes_skill_sources": SkillSourceSpec,
    "hermes_reviews": ReviewSpec,
    "hermes_importers": ImporterSpec,
    "hermes_plugin_sources": PluginSourceSpec,
    "hermes_pending_writes": PendingWritesSpec,
    "hermes_dashboard_panels": DashboardPanelSpec,
    "hermes_cli_commands": CommandSpec,
    "hermes_slash_commands": SlashCommandSpec,
    "hermes_config_sections": ConfigSectionSpec,
}
"""Each registration hook and the spec type it must yield."""

CONTRIBUTION_HOOKS: tuple[str, ...] = (
    "hermes_prompt_sections",
    "hermes_check_command",
    "hermes_status_lines",
    "hermes_doctor_checks",
    "hermes_import_home",
    "hermes_admit_chat_users",
    "hermes_store_schemas",
)
"""Hooks whose results the kernel collects (guarded like observers) at a fixed moment."""

COMMAND_HOOKS: tuple[str, ...] = (
    "hermes_status_lines",
    "hermes_doctor_checks",
    "hermes_import_home",
    "hermes_admit_chat_users",
    "hermes_store_schemas",
)
"""Contribution hooks that one command calls and a session never does: a chat does not
import the plugins that implement only these."""

GATE_HOOKS: tuple[str, ...] = ("hermes_tool_gate",)
"""Hooks whose answer decides whether something runs: a failure there denies."""

TURN_HOOKS: tuple[str, ...] = (
    "hermes_turn_context",
    "hermes_transform_tool_result",
    "hermes_transform_terminal_output",
    "hermes_transform_reply",
    "hermes_on_turn_end",
)
"""Hooks of one turn that shape what the model and the user read (a failure there is
skipped: the text stays as it was), and the turn's end."""

LIFECYCLE_HOOKS: tuple[str, ...] = (
    "hermes_on_session_start",
    "hermes_on_session_end",
    "hermes_pre_llm_call",
    "hermes_post_llm_call",
    "hermes_pre_tool_call",
    "hermes_post_tool_call",
)
"""Observer hooks, in the order they fire around a session, a model call and a tool call."""
