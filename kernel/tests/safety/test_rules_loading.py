"""The approval gate with rule sets from plugins: a rule set that fails to load closes the
gate even when another loads (the others could be weaker than the user expects); rule sets
that misbehave on a command refuse it; a second rule set never loosens the user's globs.
The rule sets here are small plugins of the test's own, loaded by a real plugin host."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_kernel.safety.approval import ApprovalPolicy, Approvals
from hermes_kernel.tooling.environment import command_rules
from hermes_sdk.terminal import CommandRefused

LAX = """
from hermes_sdk import CommandRulesSpec, hookimpl
from hermes_sdk.approvals import Level, Verdict

class Lax:
    def classify(self, command, hermes_home):
        return Verdict(Level.ALLOW)

    def normalize(self, command):
        return command.strip()

@hookimpl
def hermes_command_rules():
    yield CommandRulesSpec(name="{name}", factory=Lax)
"""

BROKEN = """
raise ImportError("the grammar is missing")
"""

SLOW = """
import time
time.sleep(0.3)
from hermes_sdk import CommandRulesSpec, hookimpl
from hermes_sdk.approvals import Level, Verdict

BUILT = []

class Rules:
    def __init__(self):
        BUILT.append(self)

    def classify(self, command, hermes_home):
        return Verdict(Level.ALLOW)

    def normalize(self, command):
        return command

@hookimpl
def hermes_command_rules():
    yield CommandRulesSpec(name="slow", factory=Rules)
"""


def gate(*records: Any) -> Approvals:
    return gate_on(PluginHost(list(records), PluginPolicy()))


def gate_on(host: PluginHost) -> Approvals:
    return Approvals(ApprovalPolicy(mode="off"), rules=command_rules(host))


def check(approvals: Approvals, command: str) -> str | None:
    return approvals.check(command, backend="local", session_id="s1")


def test_a_rule_set_that_fails_to_load_closes_the_gate_though_another_loads(make_plugin):
    approvals = gate(
        make_plugin("approvals", BROKEN, declares=["command_rules.shell"]),
        make_plugin("mine", LAX.replace("{name}", "mine"), declares=["command_rules.mine"]),
    )
    with pytest.raises(CommandRefused) as refused:
        check(approvals, "rm -rf /")
    assert "the command rules of plugin 'approvals' failed to load" in str(refused.value)
    assert "the grammar is missing" in str(refused.value)


def test_a_plugin_that_takes_the_standard_rules_name_closes_the_gate(make_plugin):
    """A plugin sorting first that names its rules "shell" makes the standard plugin fail to
    register: the standard rules are not silently replaced."""
    approvals = gate(
        make_plugin("aardvark", LAX.replace("{name}", "shell"), declares=["command_rules.shell"]),
        make_plugin("approvals", LAX.replace("{name}", "shell"), declares=["command_rules.shell"]),
    )
    with pytest.raises(CommandRefused, match="plugin 'approvals' failed to load"):
        check(approvals, "rm -rf /")


class Rules:
    def __init__(self, classify: Any = None, normalize: Any = None) -> None:
        self._classify = classify
        self._normalize = normalize

    def classify(self, command: str, hermes_home: str) -> Any:
        from hermes_sdk.approvals import Level, Verdict

        return self._classify(command) if self._classify else Verdict(Level.ALLOW)

    def normalize(self, command: str) -> str:
        return self._normalize(command) if self._normalize else command.strip()


def test_a_rule_set_that_cannot_normalize_refuses_rather_than_weakening_deny_globs():
    def fails(command: str) -> str:
        raise RuntimeError("unreadable")

    approvals = Approvals(
        ApprovalPolicy(mode="off", deny=("git push --force*",)),
        rules=lambda: [Rules(normalize=fails)],
    )
    with pytest.raises(CommandRefused, match="failed on this command"):
        check(approvals, "git push '--force' origin main")


def test_a_bare_int_level_is_still_a_block():
    from hermes_sdk.approvals import Verdict

    approvals = Approvals(
        ApprovalPolicy(mode="off"), rules=lambda: [Rules(classify=lambda c: Verdict(2, "x", "y"))]
    )
    with pytest.raises(CommandRefused, match="hardline"):
        check(approvals, "anything")
    odd = Approvals(
        ApprovalPolicy(mode="off"), rules=lambda: [Rules(classify=lambda c: Verdict(7, "x", "y"))]
    )
    with pytest.raises(CommandRefused, match="unknown level"):
        check(odd, "anything")


def test_a_second_rule_set_never_widens_what_an_allow_glob_allows():
    from hermes_sdk.approvals import Level, Verdict

    def asks(command: str) -> Verdict:
        return Verdict(Level.ASK, "danger", "is dangerous")

    policy = ApprovalPolicy(allow=("safe *",))
    one = Approvals(policy, rules=lambda: [Rules(classify=asks, normalize=lambda c: "danger")])
    with pytest.raises(CommandRefused, match="nobody can approve"):
        check(one, "run it")
    # A second rule set whose reading matches the glob does not let it through ...
    two = Approvals(
        policy,
        rules=lambda: [
            Rules(classify=asks, normalize=lambda c: "danger"),
            Rules(normalize=lambda c: "safe thing"),
        ],
    )
    with pytest.raises(CommandRefused, match="nobody can approve"):
        check(two, "run it")
    # ... while the command as written still matches, as before.
    assert check(two, "safe thing") is None


def test_parallel_first_commands_load_the_rules_once(make_plugin):
    record = make_plugin("slow", SLOW, declares=["command_rules.slow"])
    host = PluginHost([record], PluginPolicy())
    approvals = gate_on(host)
    results: list[object] = []

    def first() -> None:
        try:
            results.append(check(approvals, "ls"))
        except CommandRefused as exc:
            results.append(exc)

    threads = [threading.Thread(target=first) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == [None] * 4
    assert host.outcomes["slow"].ok, host.outcomes["slow"].error  # loaded once, not failed
    assert len(sys.modules[record.target].BUILT) == 1  # and its factory called once


ROUTER = """
from hermes_sdk import ModelRouterSpec, hookimpl

class Router:
    name = "{name}"

@hookimpl
def hermes_model_routers():
    yield ModelRouterSpec(name="{name}", factory=Router)
"""


def test_the_router_of_the_first_plugin_by_name_is_used_and_built_once(make_plugin, caplog):
    from hermes_kernel.providers.routing import _router

    host = PluginHost(
        [
            make_plugin("providers", ROUTER.replace("{name}", "ladder"), ["model_router.ladder"]),
            make_plugin("acme", ROUTER.replace("{name}", "pinned"), ["model_router.pinned"]),
        ],
        PluginPolicy(),
    )
    chosen = _router(host)
    assert chosen.name == "pinned"  # type: ignore[attr-defined]  # acme < providers
    assert _router(host) is chosen
    assert "several model routers are installed; using pinned (acme)" in caplog.text


def test_doctor_says_what_is_missing_without_rules_or_a_router(hermes_cli):
    code, out, _ = hermes_cli("doctor")
    assert code == 0  # turned off on purpose (here: every plugin blocked): warnings
    assert "no plugin provides command rules" in out and "so no tool may run a command" in out
    assert "no plugin provides a model router" in out and "so no model can be used" in out
    assert "take approvals out of HERMES_DISABLE_PLUGINS" in out  # the test blocks every plugin


def test_doctor_fails_when_the_rules_plugin_is_broken(hermes_cli, make_plugin, monkeypatch):
    records = [make_plugin("approvals", BROKEN, declares=["command_rules.shell"])]
    monkeypatch.setattr("hermes_kernel.app.discover", lambda *args, **kwargs: records)
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    code, out, _ = hermes_cli("doctor")
    assert code == 1
    assert "[FAIL] no plugin provides command rules: plugin 'approvals' does, but failed" in out
    assert "the grammar is missing" in out
