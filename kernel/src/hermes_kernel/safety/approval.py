"""Dangerous-command approval: the one decision every command a tool runs goes through.

Order of precedence, strictest first:

1. ``approvals.deny`` globs (the user's own rules) refuse, in every mode;
2. the installed command rules (a plugin's :class:`~hermes_sdk.approvals.CommandRules`,
   the strictest verdict of all of them) judge the command; their hardline floor refuses,
   in every mode and every backend. With no rules installed, every command is refused;
3. a harmless command runs;
   a guarded one (Hermes's own state: ``hermes config set``, a write into HERMES_HOME ...)
   is asked about every time, whatever the mode, ``--yolo``, an allow rule, the judge or an
   isolated backend say, and refused where nobody can be asked;
4. a dangerous one runs if ``mode`` is ``off`` (or ``--yolo``), if the backend is isolated
   (a container without host mounts), if ``approvals.allow`` names its rule or matches it,
   or if the user approved its rule for this session; otherwise
5. ``smart`` mode asks an auxiliary model (APPROVE / DENY; anything else escalates), and
   ``manual`` mode asks the user: once, for the session, always (saved to
   ``approvals.allow``), or deny. Nobody to ask (a one-shot run without a terminal, a
   scheduled job) or no answer in time means deny.
"""

from __future__ import annotations

import enum
import fnmatch
import logging
import shlex
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from hermes_kernel.config.defaults import APPROVALS_MODE, APPROVALS_TIMEOUT_SECONDS
from hermes_sdk.approvals import CommandRules, Level, Verdict
from hermes_sdk.terminal import CommandRefused

__all__ = [
    "Answer",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approvals",
    "Approver",
    "Judge",
    "NobodyToAsk",
]

log = logging.getLogger("hermes.safety")


class Answer(enum.StrEnum):
    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    COMMAND = "command"
    """Always allow exactly this command (its text, not its rule class)."""
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRequest:
    command: str
    rule: str
    reason: str
    backend: str
    session_id: str
    exact: str | None = None
    """The command as written, for ``approvals.allow_commands`` (which allows exactly that
    text, compared as it is, never as a glob or a rule set's reading); None when the
    question is not about a command as written (a file write)."""
    guarded: bool = False
    """Hermes's own state: the user may allow it this once, never for longer."""
    gate: bool = False
    """A plugin's gate asks (``rule`` names the gate and the tool): no rule to save."""


class NobodyToAsk(Exception):
    """Raised by an approver that has no one to ask for this session (an API request, a
    scheduled job); the message says where, for the model's refusal."""


Approver = Callable[[ApprovalRequest], Answer | None]
"""Asks the user (blocking, from a worker thread); None when nobody answered in time."""
Judge = Callable[[ApprovalRequest], str]
"""Smart mode's auxiliary model: returns its raw answer (APPROVE, DENY or ESCALATE)."""
PluginCheck = Callable[[str, str, str], Sequence[str]]
"""(command, normalized, backend) -> the plugins' answers ("ask: ..." / "deny: ...")."""
RulesLoader = Callable[[], Sequence[CommandRules]]
"""The installed command rules, built on the first command checked; raises
:class:`NoRules` (its message says what to install) when there are none."""


class NoRules(Exception):
    """No command rules are installed or they could not be built: nothing may run."""


@dataclass(frozen=True)
class ApprovalPolicy:
    mode: str = APPROVALS_MODE  # manual | smart | off
    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    allow_commands: tuple[str, ...] = ()
    """Exact commands that run without asking: the text as written (stripped), nothing
    that merely reads the same."""
    timeout_seconds: float = APPROVALS_TIMEOUT_SECONDS


def _plugin_verdicts(answers: Sequence[str]) -> list[Verdict]:
    verdicts = []
    for answer in answers:
        kind, _, reason = str(answer).partition(":")
        kind = kind.strip().lower()
        if kind == "deny":
            verdicts.append(Verdict(Level.BLOCK, "plugin", reason.strip() or "a plugin refused it"))
        elif kind == "ask":
            verdicts.append(Verdict(Level.ASK, "plugin", reason.strip() or "a plugin flagged it"))
    return verdicts


@dataclass
class Approvals:
    policy: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    approver: Approver | None = None
    judge: Judge | None = None
    remember: Callable[[str], None] | None = None
    """Saves a rule the user allowed always (to ``approvals.allow`` in config.yaml)."""
    remember_command: Callable[[str], None] | None = None
    """Saves a command the user allowed always, exactly as written (to
    ``approvals.allow_commands``)."""
    plugin_check: PluginCheck | None = None
    rules: RulesLoader | None = None
    """Where the command rules come from; None means none are installed."""
    hermes_home: str = ""
    """The home's real path: writes into it are Hermes's own state however they are spelled."""
    _session_rules: dict[str, set[str]] = field(default_factory=dict)
    _allowed_always: set[str] = field(default_factory=set)
    _allowed_commands: set[str] = field(default_factory=set)
    """Commands allowed always, as written (until config.yaml is read again)."""
    _asking: dict[str, threading.Lock] = field(default_factory=dict)
    """One question at a time per session (parallel tools of one turn wait their turn);
    sessions of different users (a chat platform's) never wait for each other."""
    _asking_guard: threading.Lock = field(default_factory=threading.Lock)
    _loaded: list[CommandRules] | None = None
    _loading: threading.Lock = field(default_factory=threading.Lock)
    unasked_sessions: set[str] = field(default_factory=set)
    """Sessions whose user turned asking off (``--yolo``, ``/yolo``): as mode ``off``."""

    def _rules(self) -> list[CommandRules]:
        """The rule sets, built on the first check (so a session that runs no command never
        imports them); raises CommandRefused when there are none."""
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._loading:  # parallel first calls build the rules once
            if self._loaded is None:
                try:
                    if self.rules is None:
                        raise NoRules("no command rules are installed")
                    built = list(self.rules())
                except NoRules as exc:
                    raise CommandRefused(f"refused: nothing may run: {exc}") from None
                if not built:
                    raise CommandRefused("refused: nothing may run: no command rules are installed")
                self._loaded = built
            return self._loaded

    def _normal_forms(self, command: str) -> list[str]:
        """The command as each rule set normalizes it (quotes, escapes and harmless
        prefixes resolved), distinct, in order: what the user's globs and plugins' checks
        also see. A rule set that cannot normalize it refuses it, as one that cannot judge
        it does: a deny glob must never see less than it did."""
        forms: list[str] = []
        for rules in self._rules():
            try:
                form = rules.normalize(command)
            except Exception as exc:  # noqa: BLE001 - what the rules cannot read never runs
                raise _unjudged(exc) from None
            if form not in forms:
                forms.append(form)
        return forms

    def verdict(self, command: str, backend: str) -> Verdict:
        found = []
        for rules in self._rules():
            try:
                found.append(_checked(rules.classify(command, self.hermes_home)))
            except Exception as exc:  # noqa: BLE001 - what the rules cannot judge never runs
                raise _unjudged(exc) from None
        if self.plugin_check is not None:
            # Each plugin check sees every rule set's reading, so adding a rule set with a
            # different reading can only add answers, never hide one.
            for normalized in self._normal_forms(command) or [command.strip()]:
                found += _plugin_verdicts(self.plugin_check(command, normalized, backend))
        return max(found, key=lambda v: v.weight)

    def _denied_by_user_rule(self, command: str) -> str | None:
        candidates = {command.strip(), *self._normal_forms(command)}
        for pattern in self.policy.deny:
            if any(fnmatch.fnmatchcase(text, pattern) for text in candidates):
                return pattern
        return None

    def _allowed(self, command: str, verdict: Verdict, session_id: str) -> bool:
        if verdict.rule in self._session_rules.get(session_id, set()):
            return True
        if verdict.rule in self._allowed_always:
            return True
        raw = command.strip()
        # Exactly this text: never a glob, never a rule set's reading (which may fold case,
        # quotes or $HOME into ~, and so read another command the same).
        if raw in self._allowed_commands or raw in self.policy.allow_commands:
            return True
        forms = self._normal_forms(command)
        for entry in self.policy.allow:
            if entry == verdict.rule != "plugin":
                return True
            if not any(ch in entry for ch in "*?["):
                continue
            # The command as written, or as every rule set reads it: a second rule set's
            # reading may narrow what a glob allows, never widen it.
            if fnmatch.fnmatchcase(raw, entry) or (
                forms and all(fnmatch.fnmatchcase(form, entry) for form in forms)
            ):
                return True
        return False

    def ask_gate(
        self, shown: str, reason: str, backend: str, session_id: str, rule: str
    ) -> str | None:
        """A plugin's gate asks about a tool call (any tool; ``shown`` is the call as the
        user sees it): ``approvals.mode: off`` and ``--yolo`` let it run, as for a plugin's
        check of a command; *session* covers ``rule`` (that gate, on that tool) for the rest
        of the session, nothing wider. Raises CommandRefused when it must not run."""
        if self.policy.mode == "off" or session_id in self.unasked_sessions:
            return f"allowed without asking (approvals off): {reason}"
        request = ApprovalRequest(shown, rule, reason, backend, session_id, gate=True)
        return self._ask_user(request, command=False)

    def check_write(
        self, path: str, *, backend: str, session_id: str, isolated: bool = False
    ) -> str | None:
        """A file tool's write to ``path``, judged by the terminal's rules for a write
        there (as ``: > PATH``) and asked about as ``write_file PATH``."""
        return self.check(
            f": > {shlex.quote(path)}",
            backend=backend,
            session_id=session_id,
            isolated=isolated,
            shown=f"write_file {path}",
        )

    def check(
        self,
        command: str,
        *,
        backend: str,
        session_id: str,
        isolated: bool = False,
        shown: str | None = None,
    ) -> str | None:
        """Raise CommandRefused (its message is for the model) unless ``command`` may run;
        returns a note when it runs only because of an approval, else None. ``shown`` is
        what the user is asked about, when that is not the command itself."""
        pattern = self._denied_by_user_rule(command)
        if pattern is not None:
            raise CommandRefused(
                f"refused: the command matches your approvals.deny rule {pattern!r}"
            )
        verdict = self.verdict(command, backend)
        if verdict.level is Level.BLOCK:
            raise CommandRefused(
                f"refused: this command {verdict.reason} ({verdict.rule}). It is on the "
                "hardline list, which no setting lifts; do not try to work around it. Tell "
                "the user what you wanted to do instead."
            )
        if verdict.level is Level.ALLOW:
            return None
        request = ApprovalRequest(
            shown or command,
            verdict.rule,
            verdict.reason,
            backend,
            session_id,
            exact=None if shown or not command.strip() else command.strip(),
            guarded=verdict.guarded,
        )
        if verdict.guarded:  # no mode, --yolo, allow rule, judge or container lifts it
            return self._ask_user(request)
        if self.policy.mode == "off" or session_id in self.unasked_sessions:
            return f"allowed without asking (approvals off): {verdict.reason}"
        if isolated:
            return f"allowed without asking in an isolated container: {verdict.reason}"
        if self._allowed(command, verdict, session_id):
            return None
        if self.policy.mode == "smart" and self.judge is not None:
            answer = self._ask_judge(request)
            if answer == "APPROVE":
                return f"approved by the auxiliary model: {verdict.reason}"
            if answer == "DENY":
                raise CommandRefused(
                    f"refused: the safety model denied this command ({verdict.reason}). "
                    "Ask the user if it is really needed."
                )
        return self._ask_user(request)

    def _ask_judge(self, request: ApprovalRequest) -> str:
        try:
            raw = self.judge(request) if self.judge is not None else ""
        except Exception as exc:  # noqa: BLE001 - a failing judge escalates to the user
            log.warning("smart approval failed (%s); asking the user", exc)
            return "ESCALATE"
        words = raw.strip().upper().split()
        return words[0].strip(".!:") if words else "ESCALATE"

    def _ask_user(self, request: ApprovalRequest, *, command: bool = True) -> str | None:
        """Ask, one question per session at a time; ``command``: ``request`` is a shell
        command (one the session allowed meanwhile is not asked about again)."""
        guarded = request.guarded
        if self.approver is None:
            raise _nobody_can_approve(request, "no interactive terminal", guarded)
        with self._asking_guard:
            asking = self._asking.setdefault(request.session_id, threading.Lock())
        with asking:
            allowed = Verdict(Level.ASK, request.rule)
            if request.gate and request.rule in self._session_rules.get(request.session_id, ()):
                return None  # that gate's question was answered for the session meanwhile
            if (
                command
                and not guarded
                and self._allowed(request.command, allowed, request.session_id)
            ):
                return None  # approved for the session while this call waited its turn
            try:
                answer = self.approver(request)
            except NobodyToAsk as exc:
                raise _nobody_can_approve(request, str(exc), guarded) from None
        if answer is None:
            raise CommandRefused(
                "refused: the user did not answer the approval request in time "
                f"({self.policy.timeout_seconds:.0f} s)"
            )
        if answer is Answer.DENY:
            raise CommandRefused(
                f"refused: the user denied this command ({request.reason}). Ask them how to "
                "proceed instead of retrying it."
            )
        if guarded:
            return "approved by the user (this once: Hermes's own state is asked about each time)"
        if answer is Answer.SESSION:
            self._session_rules.setdefault(request.session_id, set()).add(request.rule)
        elif answer is Answer.ALWAYS and request.rule != "plugin" and not request.gate:
            self._allowed_always.add(request.rule)
            self._save(self.remember, request.rule, "approvals.allow")
        elif answer is Answer.COMMAND and request.exact is not None:
            self._allowed_commands.add(request.exact)
            self._save(self.remember_command, request.exact, "approvals.allow_commands")
        return f"approved by the user ({answer.value})"

    @staticmethod
    def _save(save: Callable[[str], None] | None, entry: str, key: str) -> None:
        if save is not None:
            try:
                save(entry)
            except Exception as exc:  # noqa: BLE001 - the approval stands for this run
                log.warning("could not save %s: %s", key, exc)


def _checked(verdict: Verdict) -> Verdict:
    """The verdict with its level as a :class:`Level` (a rule set may return a bare int);
    anything else is refused."""
    try:
        level = Level(int(verdict.level))
    except (TypeError, ValueError):
        raise ValueError(f"returned a verdict of unknown level {verdict.level!r}") from None
    return verdict if verdict.level is level else replace(verdict, level=level)


def _unjudged(exc: Exception) -> CommandRefused:
    log.warning("command rules failed on a command: %s", exc)
    return CommandRefused(
        f"refused: the command rules failed on this command ({type(exc).__name__}: {exc}); "
        "nothing runs that they cannot judge"
    )


def _nobody_can_approve(request: ApprovalRequest, where: str, guarded: bool) -> CommandRefused:
    if guarded:
        return CommandRefused(
            f"refused: this command {request.reason}, which only the user may do, and nobody "
            f"can approve it here ({where}). No setting lifts this; do not try another way. "
            "Tell the user the exact command, so they can run it themselves if they want it."
        )
    return CommandRefused(
        f"refused: this command {request.reason} and needs the user's approval, but nobody "
        f"can approve it here ({where}). The user can allow it with approvals.allow: "
        f"[{request.rule}] in config.yaml, or run it from an interactive chat."
    )
