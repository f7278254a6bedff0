"""The memory tool's operations (add, replace, remove), applied all or nothing with the
budget checked on the result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_commons.scan import scan_text
from hermes_plugin_memory_builtin.scopes import TARGETS, Budgets

__all__ = ["MemoryRefused", "Operation", "apply", "listing", "parse_operations"]

ACTIONS = ("add", "replace", "remove")
PREVIEW = 80


class MemoryRefused(ValueError):
    """An operation that cannot be applied; the message tells the model what to do instead."""


@dataclass(frozen=True)
class Operation:
    action: str
    target: str = "memory"
    content: str = ""
    old_text: str = ""

    def describe(self) -> str:
        what = self.content or self.old_text
        return f"{self.action} {self.target}: {what[:PREVIEW]}"


def parse_operations(raw: Sequence[Any]) -> list[Operation]:
    operations = []
    for number, item in enumerate(raw, 1):
        if not isinstance(item, Mapping):
            raise MemoryRefused(f"operation {number} is not an object {{action, target, ...}}")
        operations.append(
            check(
                Operation(
                    action=str(item.get("action") or ""),
                    target=str(item.get("target") or "memory"),
                    content=str(item.get("content") or ""),
                    old_text=str(item.get("old_text") or ""),
                )
            )
        )
    if not operations:
        raise MemoryRefused("operations is empty: give at least one")
    return operations


def check(operation: Operation) -> Operation:
    """Refuse malformed or unsafe operations before anything is locked or read."""
    if operation.action not in ACTIONS:
        raise MemoryRefused(f"action must be one of {', '.join(ACTIONS)}, not {operation.action!r}")
    if operation.target not in TARGETS:
        raise MemoryRefused(f"target must be 'memory' or 'user', not {operation.target!r}")
    content = operation.content.strip()
    if operation.action in ("add", "replace") and not content:
        raise MemoryRefused(f"{operation.action} needs content")
    if operation.action in ("replace", "remove") and not operation.old_text.strip():
        raise MemoryRefused(f"{operation.action} needs old_text: a short unique part of the entry")
    if "\n§\n" in f"\n{content}\n":
        raise MemoryRefused("content must not contain a line holding only §: it separates entries")
    findings = scan_text(content)
    if findings:
        reasons = "; ".join(str(finding) for finding in findings)
        raise MemoryRefused(f"refused to store this content: {reasons}")
    return Operation(operation.action, operation.target, content, operation.old_text.strip())


def _find(entries: list[str], old_text: str, target: str) -> int:
    matches = [i for i, entry in enumerate(entries) if old_text in entry]
    if not matches:
        raise MemoryRefused(f"no {target} entry contains {old_text!r}; {listing(target, entries)}")
    if len(matches) > 1:
        shown = "; ".join(repr(entries[i][:PREVIEW]) for i in matches)
        raise MemoryRefused(
            f"{old_text!r} is in {len(matches)} {target} entries ({shown}): give a longer part"
        )
    return matches[0]


def apply(
    entries: dict[str, list[str]], operations: Sequence[Operation], budgets: Budgets
) -> tuple[dict[str, list[str]], list[str]]:
    """The entries after every operation, and a line per operation; MemoryRefused (nothing
    applied) if one fails or a file ends up over its budget."""
    result = {target: list(entries.get(target, [])) for target in TARGETS}
    notes = []
    for operation in operations:
        current = result[operation.target]
        if operation.action == "add":
            if operation.content in current:
                notes.append(f"already in {operation.target}: {operation.content[:PREVIEW]}")
                continue
            current.append(operation.content)
        elif operation.action == "replace":
            current[_find(current, operation.old_text, operation.target)] = operation.content
        else:
            del current[_find(current, operation.old_text, operation.target)]
        notes.append(operation.describe())
    for target in TARGETS:
        used, budget = size(result[target]), budgets.of(target)
        if used > budget and used > size(entries.get(target, [])):
            raise MemoryRefused(
                f"{target} would hold {used} of its {budget} characters, so nothing was "
                f"written. Consolidate first: replace or remove entries, in one batch with "
                f"this change. {listing(target, entries.get(target, []))}"
            )
    return result, notes


def size(entries: Sequence[str]) -> int:
    return len("\n§\n".join(entries))


def listing(target: str, entries: Sequence[str]) -> str:
    if not entries:
        return f"{target} is empty"
    lines = [f"{target} now holds {len(entries)} entries ({size(entries)} characters):"]
    lines += [f"{n}. [{len(entry)}] {entry}" for n, entry in enumerate(entries, 1)]
    return "\n".join(lines)
