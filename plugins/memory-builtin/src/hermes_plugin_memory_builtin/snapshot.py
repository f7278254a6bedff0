"""The memory block of a new session's system prompt: a snapshot taken at session start,
with how full each file is, frozen with the prompt (writes show from the next session)."""

from __future__ import annotations

from hermes_plugin_memory_builtin.files import MemoryUnreadable, read_entries
from hermes_plugin_memory_builtin.memory import Memory
from hermes_plugin_memory_builtin.operations import size
from hermes_sdk import PromptSection

__all__ = ["memory_section"]

HEADINGS = {"memory": "MEMORY (your notes)", "user": "USER PROFILE (who the user is)"}


def memory_section(memory: Memory) -> PromptSection:
    blocks = []
    for target, heading in HEADINGS.items():
        budget = memory.budgets.of(target)
        try:
            entries = read_entries(memory.place.path(target))
        except MemoryUnreadable as exc:
            blocks.append(f"{heading}: unavailable this session ({exc})")
            continue
        used = size(entries)
        header = f"{heading} [{used * 100 // budget}% of {budget} chars]"
        blocks.append(header + ("\n" + "\n§\n".join(entries) if entries else "\n(empty)"))
    guide = (
        "A snapshot taken when this session started. Keep it current with the memory tool: "
        "durable facts and preferences, not what one task needed. Changes show from the next "
        "session."
    )
    return PromptSection(title="Memory", text=guide + "\n\n" + "\n\n".join(blocks), tier=10)
