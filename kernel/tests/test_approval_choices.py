"""What an approval offers says exactly what each answer allows: "always" names the rule it
saves to config.yaml and how wide that rule is, and is not offered when there is no rule to
save (a plugin's check)."""

from __future__ import annotations

from hermes_kernel.runtime.questions import approval_choices
from hermes_kernel.safety.approval import ApprovalRequest


def test_always_names_the_rule_it_saves_and_what_it_covers():
    request = ApprovalRequest(
        "rm -rf build", "recursive-delete", "deletes recursively", "local", "s"
    )
    labels = {choice.value: choice.label for choice in approval_choices(request)}
    assert list(labels) == ["once", "session", "always", "deny"]  # no exact entry given
    assert labels["once"] == "Allow this command once"
    assert labels["session"] == "Allow every command that deletes recursively, for this session"
    assert labels["always"].startswith("Always allow every command that deletes recursively")
    assert "approvals.allow: [recursive-delete] in config.yaml" in labels["always"]


def test_a_plugins_check_offers_no_always():
    request = ApprovalRequest("deploy", "plugin", "was flagged by a plugin", "local", "s")
    assert [choice.value for choice in approval_choices(request)] == ["once", "session", "deny"]


def test_a_narrower_always_is_offered_for_the_command_as_written():
    request = ApprovalRequest(
        "rm -rf build/*",
        "recursive-delete",
        "deletes recursively",
        "local",
        "s",
        exact="rm -rf build/*",
    )
    labels = {choice.value: choice.label for choice in approval_choices(request)}
    assert list(labels) == ["once", "session", "command", "always", "deny"]
    assert labels["command"] == (
        'Always allow exactly this command: saves approvals.allow_commands: ["rm -rf build/*"] '
        "in config.yaml"
    )
    two_lines = ApprovalRequest(
        "a\nb", "r", "does it", "local", "s", exact="echo 'a'\nrm -rf b"
    )  # shown as saved: the line break escaped, not read as a space
    (command,) = [c for c in approval_choices(two_lines) if c.value == "command"]
    assert """["echo 'a'\\nrm -rf b"]""" in command.label


def test_hermes_own_state_is_allowed_once_or_not_at_all():
    request = ApprovalRequest(
        "rm -rf ~/.hermes/state.db",
        "hermes-state",
        "deletes Hermes's state",
        "local",
        "s",
        exact="rm -rf ~/.hermes/state.db",
        guarded=True,
    )
    assert [choice.value for choice in approval_choices(request)] == ["once", "deny"]


def test_the_sdk_names_the_answers_that_save_a_rule():
    """Front-ends whose users are not the owner leave these out (hermes_sdk.runtime)."""
    from hermes_kernel.safety.approval import Answer
    from hermes_sdk.runtime import SAVING_ANSWERS

    assert {Answer.ALWAYS.value, Answer.COMMAND.value} == SAVING_ANSWERS
    assert {a.value for a in Answer} - SAVING_ANSWERS == {"once", "session", "deny"}
