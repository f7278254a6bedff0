"""The standard command rules: the judge the approval gate asks about every command a tool
runs. Commands are read with a shell grammar (:mod:`.shell`); each rule class is a module:
destruction, exfiltration, footholds, Hermes's own state, and the hardline floor in
:mod:`.commands`. They catch mistakes, not adversaries: the operating system is the real
boundary."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandRulesSpec, hookimpl
from hermes_sdk.approvals import Verdict

__all__ = ["ShellRules", "hermes_command_rules"]


class ShellRules:
    """:class:`~hermes_sdk.approvals.CommandRules` over :mod:`.commands`, imported when the
    first command is checked."""

    def __init__(self) -> None:
        from hermes_plugin_approvals import commands

        self._commands = commands

    def classify(self, command: str, hermes_home: str) -> Verdict:
        return self._commands.classify(command, hermes_home)

    def normalize(self, command: str) -> str:
        return self._commands.normalize(command)


@hookimpl
def hermes_command_rules() -> Iterator[CommandRulesSpec]:
    yield CommandRulesSpec(
        name="shell",
        description="Dangerous commands asked, hardline ones refused, Hermes's own state guarded.",
        factory=ShellRules,
    )
