"""The tools' world for one Hermes process: backends, approvals and the user, from config.

A front-end builds one :class:`ToolEnvironment`, says how to reach
the user (an approver for dangerous commands, a way to ask questions), and hands the engine
its :meth:`ToolEnvironment.context` factory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_commons.redact import redact_text
from hermes_kernel.config.defaults import APPROVALS_MODE, TERMINAL_SHARE_BACKEND
from hermes_kernel.config.edit import allow_approval_command, allow_approval_rule
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.engine.aside import complete_from_thread
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.media import MediaSupport
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.safety.approval import (
    ApprovalPolicy,
    Approvals,
    Approver,
    Judge,
    NoRules,
    RulesLoader,
)
from hermes_kernel.safety.environment import INSIDE_AGENT, command_environment
from hermes_kernel.safety.paths import SAFE_ROOT_VARIABLE
from hermes_kernel.store.sessions import REVIEW_SOURCE, Session
from hermes_kernel.store.state import StateStore
from hermes_kernel.tooling.backends import BackendPool
from hermes_kernel.tooling.history import history_searcher
from hermes_sdk import BackendSpec, CommandRulesSpec, Kind
from hermes_sdk.media import Attachment
from hermes_sdk.tooling import ToolContext, Unsupported

if TYPE_CHECKING:
    from hermes_kernel.config.settings import Settings
    from hermes_kernel.plugins.host import PluginHost
    from hermes_sdk.approvals import CommandRules
    from hermes_sdk.runtime import Runtime

__all__ = ["DEFAULT_BACKEND", "Ask", "ToolEnvironment", "approval_policy", "backend_name"]

log = logging.getLogger("hermes.tools")

DEFAULT_BACKEND = "local"
Ask = Callable[[str, Sequence[str]], str | None]


def _nobody(question: str, choices: Sequence[str]) -> str | None:
    return None


def _reserved_variables(settings: Settings) -> set[str]:
    """Names of variables Hermes reads keys from: never passed to a command."""
    raw = settings.raw
    names = set(settings.secrets.dotenv)
    for section in [raw.get("model") or {}, *(raw.get("providers") or {}).values()]:
        if isinstance(section, dict) and section.get("api_key_env"):
            names.add(str(section["api_key_env"]))
    for variables in (raw.get("credential_pools") or {}).values():
        names.update(str(name) for name in variables or [])
    names.update(name for name in settings.environ if name.endswith("_API_KEY"))
    return names


def backend_name(raw: Mapping[str, Any]) -> str:
    """The terminal backend tools run commands in (``agent.backend``, else the default)."""
    agent = raw.get("agent")
    return str((agent if isinstance(agent, Mapping) else {}).get("backend") or DEFAULT_BACKEND)


def approval_policy(raw: Mapping[str, Any]) -> ApprovalPolicy:
    """The ``approvals:`` section (validated at load) as a policy. Asking is turned off per
    session (``Approvals.unasked_sessions``), never for the whole process."""
    approvals = raw.get("approvals") or {}
    mode = approvals.get("mode", APPROVALS_MODE)
    mode = "off" if mode is False else str(mode)  # YAML 1.1 reads a bare `off` as false
    nested = INSIDE_AGENT in os.environ  # set (even empty): an agent's tool started it
    return ApprovalPolicy(
        # Never more than the agent that started it: every dangerous command asked (and,
        # with nobody to ask, refused), whatever this home's mode and allow rules say.
        mode="manual" if nested else mode,  # asking, whatever the default
        deny=tuple(approvals.get("deny") or ()),
        allow=() if nested else tuple(approvals.get("allow") or ()),
        allow_commands=()
        if nested
        else tuple(str(c).strip() for c in approvals.get("allow_commands") or ()),
        timeout_seconds=float(approvals.get("timeout_seconds", ApprovalPolicy.timeout_seconds)),
    )


STANDARD_RULES = "approvals"
"""The standard bundle's command rules: named when none are installed, as the fix."""


def command_rules(host: PluginHost) -> RulesLoader:
    """The installed command rules, each built once on the first command checked; with none,
    :class:`NoRules` says which plugin to enable or install."""

    def load() -> list[CommandRules]:
        built = []
        found = host.provided(Kind.COMMAND_RULES)
        broken = _broken_rules(host)
        if broken is not None:
            raise NoRules(broken)
        for provided in found:
            spec = provided.spec
            assert isinstance(spec, CommandRulesSpec)  # the index holds these under the kind
            try:
                built.append(spec.build())
            except Exception as exc:  # noqa: BLE001 - said in the refusal, one line
                raise NoRules(
                    f"the command rules of plugin {provided.plugin!r} failed to start "
                    f"({type(exc).__name__}: {exc}); see: hermes plugins info {provided.plugin}"
                ) from None
        if not built:
            from hermes_kernel.plugins.missing import why_missing  # only to say what is missing

            missing = why_missing(host, Kind.COMMAND_RULES, "command rules", STANDARD_RULES)
            raise NoRules(missing)
        return built

    return load


def _broken_rules(host: PluginHost) -> str | None:
    """Why the rules cannot be trusted: an enabled plugin that declares command rules and
    failed to load (a broken import, a rule set's name another plugin took first). The
    others alone could be weaker than the user expects, so nothing runs."""
    for record in host.enabled():
        if not record.declared_names(Kind.COMMAND_RULES):
            continue
        outcome = host.outcomes.get(record.name)
        if outcome is not None and not outcome.ok:
            return (
                f"the command rules of plugin {record.name!r} failed to load "
                f"({outcome.error}); see: hermes plugins info {record.name}"
            )
    return None


LOOK_INSTRUCTIONS = (
    "You look at images for an assistant that cannot see them. Answer its question about "
    "the images exactly and completely: read every piece of text in them word for word, "
    "give numbers and values, and say plainly what you cannot make out."
)


class ToolEnvironment:
    def __init__(
        self,
        host: PluginHost,
        settings: Settings,
        *,
        approver: Approver | None = None,
        ask: Ask | None = None,
        judge: Judge | None = None,
        cwd: str | None = None,
        store: StateStore | None = None,
        aside_route: Callable[[], ModelRoute] | None = None,
        ask_for: Callable[[str], Ask] | None = None,
        media: MediaSupport | None = None,
    ) -> None:
        if settings.misspelled_safety:
            raise ConfigError(settings.misspelled_safety)
        self.config = settings.raw
        self._secrets = settings.secrets
        self.store = store
        self.aside_route = aside_route
        self.media = media
        """Whether a model sees, and images made ready for one (ToolContext.look)."""
        """The model tools may ask for a summary (ToolContext.ask_model), current at call
        time: the session's primary model."""
        self.provided = host.shared()
        self._host = host
        """What plugins provide for other plugins, handed to every tool and prompt."""
        raw = settings.raw
        terminal = raw.get("terminal") or {}
        self.approvals = Approvals(
            approval_policy(raw),
            approver=approver,
            judge=judge,
            remember=lambda rule: allow_approval_rule(settings.config_path, rule),
            remember_command=lambda text: allow_approval_command(settings.config_path, text),
            plugin_check=host.check_command,
            rules=command_rules(host),
            hermes_home=os.path.realpath(settings.home),
        )
        env, self.warnings = command_environment(
            settings.environ, terminal.get("env_passthrough") or (), _reserved_variables(settings)
        )
        self.backend_name = backend_name(raw)
        self.cwd = cwd or os.getcwd()
        self.home = str(settings.home)
        self.ask = ask or _nobody
        self.ask_for = ask_for
        """Per session, where the user is (a chat platform: their chat); else ``ask``."""
        self.runtime: Callable[[], Runtime] | None = None
        """The runtime tools may start agents on (set by the chat agent)."""
        self.pool = BackendPool(
            self.backend_name,
            lambda name: self._find_backend(host, name),
            home=self.home,
            cwd=self.cwd,
            env=env,
            config=raw.get(self.backend_name) or {},
            approvals=self.approvals,
            installed=lambda: sorted(spec.name for spec in host.terminal_backends()),
            share=bool(terminal.get("share_backend", TERMINAL_SHARE_BACKEND)),
            safe_root=settings.environ.get(SAFE_ROOT_VARIABLE) or None,
        )

    @staticmethod
    def _find_backend(host: PluginHost, name: str) -> BackendSpec | None:
        provided = host.require(Kind.BACKEND, name)
        return provided.spec if provided is not None else None  # type: ignore[return-value]

    def context(self, session: Session, control: TurnControl) -> ToolContext:
        """What tools get in one turn of ``session`` (the engine's tool_context factory)."""
        # A review works for the session it reviews: same backend (no second container or
        # connection, nothing left open after it), same person.
        backend_of = session.id
        if session.source == REVIEW_SOURCE and session.parent_session_id:
            backend_of = session.parent_session_id
        return self.context_for(
            session.id,
            control,
            session.cwd,
            source=session.source,
            user_scope=session.user_scope,
            backend_of=backend_of,
        )

    def context_for(
        self,
        session_id: str,
        control: TurnControl,
        cwd: str | None = None,
        *,
        source: str = "cli",
        user_scope: str | None = None,
        backend_of: str | None = None,
    ) -> ToolContext:
        backend_key = backend_of or session_id
        return ToolContext(
            session_id=session_id,
            home=self.home,
            cwd=cwd or self.cwd,
            cancel=control.cancel,
            get_backend=lambda: self.pool.get(backend_key),
            ask=self.ask_for(session_id) if self.ask_for is not None else self.ask,
            source=source,
            user_scope=user_scope,
            config=self.config,
            provided=self.provided,
            search=history_searcher(self.store, user_scope) if self.store is not None else None,
            complete=self._completer(control),
            secrets=lambda name: self._secrets.merged().get(name),
            get_runtime=self.runtime,
            send=control.outbound.append,
            later=self._redacting(control.later),
            look=self._looker(control),
            transform_output=(
                self._host.transform_terminal_output
                if self._host.implements("hermes_transform_terminal_output")
                else None
            ),
        )

    def _redacting(self, later: Callable[[str], None] | None) -> Callable[[str], None] | None:
        """``later`` for a tool: a report is redacted as a tool's result is (it carries what
        work left running found: the front-end stores it as a message)."""
        if later is None:
            return None

        def report(text: str) -> None:
            later(redact_text(text, self._secrets.merged().values()))

        return report

    def _looker(self, control: TurnControl) -> Callable[[str, Sequence[Attachment]], str] | None:
        route_of, media = self.aside_route, self.media
        if route_of is None or media is None:
            return None

        def look(question: str, images: Sequence[Attachment]) -> str:
            if control.loop is None:
                raise RuntimeError("no turn is running to ask the model from")
            route = route_of()
            if not media.sees(route):
                raise Unsupported(
                    f"no model here sees images ({route.name} / {route.model} does not): set "
                    "auxiliary: to a vision model, or model.vision: true if it sees"
                )
            parts = [media.model_image(image) for image in images]
            return complete_from_thread(
                route, control.loop, LOOK_INSTRUCTIONS, question, images=parts
            )

        return look

    def _completer(self, control: TurnControl) -> Callable[[str, str], str] | None:
        route = self.aside_route
        if route is None:
            return None

        def complete(instructions: str, text: str) -> str:
            if control.loop is None:
                raise RuntimeError("no turn is running to ask the model from")
            return complete_from_thread(route(), control.loop, instructions, text)

        return complete

    def end_session(self, session_id: str) -> None:
        self.pool.close(session_id)

    def close(self) -> None:
        self.pool.close_all()
