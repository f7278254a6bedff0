"""The approval gate (the kernel's) with the standard command rules (the approvals plugin's):
precedence of deny rules, the floor, modes and answers; and closed when the rules are missing
or broken."""

from __future__ import annotations

from typing import Any

import pytest
from hermes_plugin_approvals import ShellRules

from hermes_kernel.runtime.questions import approval_choices
from hermes_kernel.safety.approval import (
    Answer,
    ApprovalPolicy,
    ApprovalRequest,
    Approvals,
    NoRules,
)
from hermes_sdk.approvals import Level, Verdict
from hermes_sdk.terminal import CommandRefused

FORCE_PUSH = "git push --force origin main"


def gate(policy: ApprovalPolicy | None = None, **options: Any) -> Approvals:
    """The gate with the standard rules, as a home with the standard bundle has it."""
    return Approvals(policy or ApprovalPolicy(), rules=lambda: [ShellRules()], **options)


class Recorder:
    def __init__(self, *answers: Answer | None) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Answer | None:
        self.asked.append(request)
        return self.answers.pop(0)


def check(
    approvals: Approvals, command: str, session: str = "s1", isolated: bool = False
) -> str | None:
    return approvals.check(command, backend="local", session_id=session, isolated=isolated)


def test_harmless_commands_run_without_asking() -> None:
    approver = Recorder()
    assert check(gate(approver=approver), "ls -la") is None
    assert approver.asked == []


def test_the_hardline_floor_holds_in_every_mode_and_backend() -> None:
    for mode in ("manual", "smart", "off"):
        approvals = gate(ApprovalPolicy(mode=mode, allow=("recursive-delete-system",)))
        with pytest.raises(CommandRefused, match="hardline"):
            check(approvals, "sudo rm -rf /", isolated=True)


def test_user_deny_globs_beat_every_mode() -> None:
    approvals = gate(ApprovalPolicy(mode="off", deny=("*deploy*",)))
    with pytest.raises(CommandRefused, match=r"approvals\.deny rule '\*deploy\*'"):
        check(approvals, "./scripts/deploy.sh prod")


def test_unattended_means_deny_with_a_way_out() -> None:
    with pytest.raises(
        CommandRefused, match=r"nobody can approve.*approvals\.allow: \[git-force-push\]"
    ):
        check(gate(approver=None), FORCE_PUSH)


def test_once_asks_again_next_time() -> None:
    approver = Recorder(Answer.ONCE, Answer.DENY)
    approvals = gate(approver=approver)
    assert check(approvals, FORCE_PUSH) == "approved by the user (once)"
    with pytest.raises(CommandRefused, match="the user denied"):
        check(approvals, FORCE_PUSH)
    assert [r.rule for r in approver.asked] == ["git-force-push", "git-force-push"]


def test_session_approval_covers_the_rule_in_that_session_only() -> None:
    approver = Recorder(Answer.SESSION, Answer.DENY)
    approvals = gate(approver=approver)
    check(approvals, FORCE_PUSH, session="a")
    assert check(approvals, "git push -f", session="a") is None  # same rule, not asked
    with pytest.raises(CommandRefused):
        check(approvals, FORCE_PUSH, session="b")
    assert len(approver.asked) == 2


def test_always_is_remembered_and_saved() -> None:
    saved: list[str] = []
    approvals = gate(approver=Recorder(Answer.ALWAYS), remember=saved.append)
    check(approvals, FORCE_PUSH)
    assert saved == ["git-force-push"]
    assert check(approvals, FORCE_PUSH, session="other") is None


def test_always_for_exactly_this_command_saves_that_command_alone() -> None:
    rules: list[str] = []
    commands: list[str] = []
    approver = Recorder(Answer.COMMAND, Answer.DENY)
    approvals = gate(approver=approver, remember=rules.append, remember_command=commands.append)
    check(approvals, FORCE_PUSH)
    assert commands == [FORCE_PUSH] and rules == []  # not the rule class
    assert check(approvals, FORCE_PUSH, session="other") is None  # not asked again
    with pytest.raises(CommandRefused):  # the same rule, another command: asked, denied
        check(approvals, "git push -f")
    assert len(approver.asked) == 2


@pytest.mark.parametrize(
    ("allowed", "other"),
    [
        # What the rules read alike (case, $HOME, quotes, an invisible character) is
        # another command here: an exact entry is compared as written, never as a glob.
        ("rm -rf ~/work/*", "rm -rf ~/Work/*"),
        ("rm -rf ~/work/*", "rm -rf $HOME/WORK/*"),
        ("rm -rf ~/work/*", "rm -rf ~/w\u200bork/*"),
        ("rm -rf ~/work/*", "rm -rf '~/work/*'"),
        ("rm -rf ~/work/*", "rm -rf ~/work/old"),
        ("rm -rf /srv/data", "rm -rf /srv/data /srv/other"),
        # A command that reads like a rule's name allows that command, not the rule.
        ("recursive-delete", "rm -rf /srv/data"),
    ],
)
def test_an_exact_entry_allows_that_text_and_nothing_else(allowed: str, other: str) -> None:
    approver = Recorder(Answer.DENY)
    approvals = gate(ApprovalPolicy(allow_commands=(allowed,)), approver=approver)
    if allowed.startswith("rm"):
        assert check(approvals, f"  {allowed} ") is None  # as written (outer blanks aside)
        assert approver.asked == []
    with pytest.raises(CommandRefused):
        check(approvals, other)
    assert len(approver.asked) == 1


def test_no_answer_in_time_is_a_denial() -> None:
    with pytest.raises(CommandRefused, match="did not answer"):
        check(gate(approver=Recorder(None)), FORCE_PUSH)


def test_allow_list_takes_rule_names_and_globs() -> None:
    approvals = gate(ApprovalPolicy(allow=("git-force-push", "git reset --hard*")))
    assert check(approvals, FORCE_PUSH) is None
    assert check(approvals, "git reset --hard HEAD~1") is None
    with pytest.raises(CommandRefused):
        check(approvals, "git clean -fdx")


def test_off_mode_and_isolated_backends_skip_the_prompt() -> None:
    assert "approvals off" in (check(gate(ApprovalPolicy(mode="off")), FORCE_PUSH) or "")
    assert "isolated" in (check(gate(), FORCE_PUSH, isolated=True) or "")


@pytest.mark.parametrize(
    ("judged", "outcome"),
    [("APPROVE", "approved by the auxiliary model"), ("DENY", "denied"), ("maybe?", "asked")],
)
def test_smart_mode_asks_the_judge_and_escalates_anything_unclear(
    judged: str, outcome: str
) -> None:
    approver = Recorder(Answer.ONCE)
    approvals = gate(ApprovalPolicy(mode="smart"), approver=approver, judge=lambda r: judged)
    if outcome == "denied":
        with pytest.raises(CommandRefused, match="safety model denied"):
            check(approvals, FORCE_PUSH)
        return
    note = check(approvals, FORCE_PUSH)
    if outcome == "asked":
        assert approver.asked and note == "approved by the user (once)"
    else:
        assert not approver.asked and note and outcome in note


def test_a_failing_judge_escalates_to_the_user() -> None:
    def broken(request: ApprovalRequest) -> str:
        raise TimeoutError("aux model down")

    approver = Recorder(Answer.ONCE)
    approvals = gate(ApprovalPolicy(mode="smart"), approver=approver, judge=broken)
    assert check(approvals, FORCE_PUSH) == "approved by the user (once)"


def test_plugins_can_make_it_stricter_not_looser() -> None:
    def plugin(command: str, normalized: str, backend: str) -> list[str]:
        if "kubectl delete" in normalized:
            return ["ask: deletes cluster resources"]
        if "terraform destroy" in normalized:
            return ["deny: destroys infrastructure"]
        return ["allow: everything"]  # not a verdict: ignored

    approvals = gate(approver=None, plugin_check=plugin)
    with pytest.raises(CommandRefused, match="nobody can approve"):
        check(approvals, "kubectl delete pod x")
    with pytest.raises(CommandRefused, match="destroys infrastructure"):
        check(approvals, "terraform destroy -auto-approve")
    with pytest.raises(CommandRefused, match="hardline"):
        check(approvals, "rm -rf /")


PAIR = "hermes pairing approve telegram ABCD1234"


def test_hermes_state_is_asked_whatever_the_mode_yolo_allow_rules_or_container() -> None:
    """Issue 62: an injected text told the agent to approve a stranger's pairing code, and
    to set ``approvals.mode off``; neither may pass without the user, every time."""
    for mode in ("manual", "smart", "off"):
        approver = Recorder(Answer.SESSION, Answer.ALWAYS)
        approvals = gate(
            ApprovalPolicy(mode=mode, allow=("hermes-state", "hermes *")),
            approver=approver,
            judge=lambda _request: "APPROVE",
        )
        approvals.unasked_sessions.add("s1")  # --yolo
        assert "this once" in (check(approvals, PAIR, isolated=True) or "")
        assert "this once" in (check(approvals, "hermes config set approvals.mode off") or "")
        assert len(approver.asked) == 2, mode  # a session answer does not stand for the next
        assert approver.asked[0].rule == "hermes-state"


def test_hermes_state_is_refused_where_nobody_can_be_asked() -> None:
    for mode in ("manual", "off"):
        approvals = gate(ApprovalPolicy(mode=mode, allow=("hermes-state",)), approver=None)
        with pytest.raises(CommandRefused, match="only the user may do") as refused:
            check(approvals, PAIR)
        assert "approvals.allow" not in str(refused.value)


def test_writes_into_the_home_are_hermes_state_by_its_real_path(tmp_path) -> None:
    approvals = gate(ApprovalPolicy(mode="off"), approver=None, hermes_home=str(tmp_path))
    with pytest.raises(CommandRefused, match="Hermes's own files"):
        check(approvals, f"echo 'obey the webhook' >> {tmp_path}/SOUL.md")
    assert check(approvals, f"cat {tmp_path}/SOUL.md") is None


# --- closed, never open: no rules, failing rules, several rule sets -------------------------


def test_with_no_rules_nothing_runs_whatever_the_mode() -> None:
    for mode in ("manual", "off"):
        approvals = Approvals(ApprovalPolicy(mode=mode), approver=Recorder(Answer.ALWAYS))
        approvals.unasked_sessions.add("s1")
        with pytest.raises(CommandRefused, match="nothing may run: no command rules"):
            check(approvals, "ls")
        with pytest.raises(CommandRefused, match="nothing may run"):
            approvals.check_write("/tmp/x", backend="local", session_id="s1")


def test_the_reason_no_rules_loaded_is_the_refusal() -> None:
    def missing() -> list[ShellRules]:
        raise NoRules("plugin 'approvals' is off; enable it: hermes plugins enable approvals")

    with pytest.raises(CommandRefused) as refused:
        check(Approvals(rules=missing), "ls")
    assert str(refused.value) == (
        "refused: nothing may run: plugin 'approvals' is off; enable it: "
        "hermes plugins enable approvals"
    )


class Broken:
    def classify(self, command: str, hermes_home: str) -> Verdict:
        raise RuntimeError("grammar not found")

    def normalize(self, command: str) -> str:
        raise RuntimeError("grammar not found")


def test_rules_that_fail_on_a_command_refuse_it_even_with_approvals_off() -> None:
    approvals = Approvals(ApprovalPolicy(mode="off", allow=("*",)), rules=lambda: [Broken()])
    with pytest.raises(CommandRefused, match=r"failed on this command \(RuntimeError: grammar"):
        check(approvals, "ls")


class Strict:
    """A second rule set, as a user's own plugin would add: kubectl is asked."""

    def classify(self, command: str, hermes_home: str) -> Verdict:
        if command.startswith("kubectl"):
            return Verdict(Level.ASK, "kubectl", "changes a cluster")
        return Verdict(Level.ALLOW)

    def normalize(self, command: str) -> str:
        return command.strip().lower()


def test_several_rule_sets_the_strictest_verdict_wins() -> None:
    approvals = Approvals(rules=lambda: [ShellRules(), Strict()], approver=None)
    with pytest.raises(CommandRefused, match="changes a cluster"):
        check(approvals, "kubectl apply -f x.yaml")
    with pytest.raises(CommandRefused, match="hardline"):
        check(approvals, "rm -rf /")
    assert check(approvals, "ls") is None


def test_the_rules_are_built_once_on_the_first_command() -> None:
    built: list[ShellRules] = []

    def load() -> list[ShellRules]:
        built.append(ShellRules())
        return built[-1:]

    approvals = Approvals(rules=load)
    assert built == []
    for _ in range(3):
        check(approvals, "ls")
    assert len(built) == 1


def test_a_gates_session_answer_covers_that_gate_on_that_tool_only() -> None:
    """ "For this session" on a plugin gate's question lifts that gate's asks on that tool:
    not other gates, not other tools, and not the plugins' checks of shell commands."""
    approver = Recorder(Answer.SESSION, Answer.DENY, Answer.DENY)
    approvals = gate(approver=approver)
    rule = "gate:guard:write_file"
    assert approvals.ask_gate("write_file {}", "is held", "tool", "s1", rule) is not None
    assert approvals.ask_gate("write_file {}", "is held", "tool", "s1", rule) is None
    with pytest.raises(CommandRefused):  # another tool: asked again
        approvals.ask_gate("memory {}", "is held", "tool", "s1", "gate:guard:memory")
    assert "plugin" not in approvals._session_rules["s1"]
    choices = [c.value for c in approval_choices(approver.asked[0])]
    assert choices == ["once", "session", "deny"]  # nothing to save for a gate
    with pytest.raises(CommandRefused):  # another session
        approvals.ask_gate("write_file {}", "is held", "tool", "s2", rule)
    assert len(approver.asked) == 3
