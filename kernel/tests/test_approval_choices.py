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
    assert list(labels) == ["once", "session", "always", "deny"]
    assert labels["once"] == "Allow this command once"
    assert labels["session"] == "Allow every command that deletes recursively, for this session"
    assert labels["always"].startswith("Always allow every command that deletes recursively")
    assert "approvals.allow: [recursive-delete] in config.yaml" in labels["always"]


def test_a_plugins_check_offers_no_always():
    request = ApprovalRequest("deploy", "plugin", "was flagged by a plugin", "local", "s")
    assert [choice.value for choice in approval_choices(request)] == ["once", "session", "deny"]
