"""Hermes built-in memory: MEMORY.md (the agent's notes) and USER.md (the user's profile),
the ``memory`` tool that curates them, their snapshot in each new session's prompt, the
``session_search`` tool over past sessions, a periodic background review that keeps what a
conversation says about the user, and ``/memory`` and ``hermes memory`` for pending writes
(offered to every front-end too, as the pending-writes queue ``memory``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    PendingWritesSpec,
    PromptContext,
    PromptSection,
    ReviewSpec,
    SlashCommandSpec,
    SlashContext,
    ToolsetSpec,
    ToolSpec,
    hookimpl,
)
from hermes_sdk.importing import HomeImport, ImportSection
from hermes_sdk.tooling import ToolContext

__all__ = ["memory_tool", "session_search", "slash_memory"]

# The modules doing the work are imported on first use: the chat imports this plugin at
# start (it adds to the prompt), and a plugin's import is part of everyone's startup.
ROLES = ("user", "assistant", "tool")


def session_search(query: str, context: ToolContext, **options: Any) -> str:
    from hermes_plugin_memory_builtin.history import session_search as search

    return search(query, context, **options)


def memory_tool(
    context: ToolContext,
    action: str = "add",
    target: str = "memory",
    content: str = "",
    old_text: str = "",
    operations: Sequence[Any] | None = None,
) -> str:
    from hermes_plugin_memory_builtin.files import MemoryUnreadable
    from hermes_plugin_memory_builtin.memory import Memory

    memory = Memory(context.home, context.user_scope, context.config)
    try:
        return memory.handle(
            action=action,
            target=target,
            content=content,
            old_text=old_text,
            operations=operations,
            source=context.source,
            session_id=context.session_id,
        )
    except MemoryUnreadable as exc:
        raise RuntimeError(str(exc)) from None


def slash_memory(args: str, context: SlashContext) -> str:
    from hermes_plugin_memory_builtin.files import MemoryUnreadable
    from hermes_plugin_memory_builtin.memory import Memory
    from hermes_plugin_memory_builtin.operations import MemoryRefused, listing

    memory = Memory(context.home, context.user_scope, context.config)
    command, _, rest = args.strip().partition(" ")
    try:
        if command in ("", "show"):
            entries = memory.entries()
            return "\n\n".join(listing(target, entries[target]) for target in entries)
        if command == "pending":
            return memory.pending_text()
        if command in ("approve", "reject") and rest.strip():
            method = memory.approve if command == "approve" else memory.reject
            return method(rest.strip())
    except (MemoryRefused, MemoryUnreadable) as exc:
        return f"/memory {command}: {exc}"
    return "usage: /memory [show] | pending | approve ID | reject ID"


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="memory", description="curated notes and user profile across sessions")
    yield ToolsetSpec(name="session_search", description="search past conversations")


_OPERATION = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
        "target": {"type": "string", "enum": ["memory", "user"]},
        "content": {"type": "string"},
        "old_text": {"type": "string"},
    },
    "required": ["action"],
}


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="memory",
        toolset="memory",
        takes_context=True,
        handler=memory_tool,
        description=(
            "Keep durable memory across sessions. target 'memory' is your own notes (the "
            "environment, conventions, lessons); 'user' is the user's profile (who they are, "
            "their preferences). add new content; replace or remove the entry containing "
            "old_text (a short unique part of it); read shows the entries now; or pass "
            "operations to apply several at once, all or nothing (use it to consolidate "
            "when a file is full). Save facts that will matter later, never secrets."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "replace", "remove", "read"]},
                "target": {"type": "string", "enum": ["memory", "user"]},
                "content": {"type": "string", "description": "the entry to add or put in"},
                "old_text": {"type": "string", "description": "unique part of the entry"},
                "operations": {"type": "array", "items": _OPERATION},
            },
        },
    )
    yield ToolSpec(
        name="session_search",
        toolset="session_search",
        takes_context=True,
        parallel_safe=True,
        handler=session_search,
        description=(
            "Search past conversations (yours with this user) by words, a phrase, code or "
            "CJK text. Returns ranked snippets with session ids; summarize=true returns a "
            "short summary of what the hits say instead of the raw snippets."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "session_id": {"type": "string", "description": "only this session"},
                "role": {"type": "string", "enum": list(ROLES)},
                "days": {"type": "number", "description": "only the last N days"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "summarize": {"type": "boolean"},
            },
            "required": ["query"],
        },
    )


@hookimpl
def hermes_prompt_sections(context: PromptContext) -> Iterator[PromptSection]:
    from hermes_plugin_memory_builtin.memory import Memory
    from hermes_plugin_memory_builtin.snapshot import memory_section

    yield memory_section(Memory(context.home, context.user_scope, context.config))


@hookimpl
def hermes_reviews() -> Iterator[ReviewSpec]:
    from hermes_plugin_memory_builtin.review import memory_check

    yield memory_check()


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="memory",
        description="show memory; approve or reject pending writes",
        factory="hermes_plugin_memory_builtin.cli:memory",
    )


@hookimpl
def hermes_slash_commands() -> Iterator[SlashCommandSpec]:
    yield SlashCommandSpec(
        name="memory",
        description="show memory, or review writes waiting for approval (pending, approve, reject)",
        handler=slash_memory,
        on_platforms=True,  # each person reviews the writes to their own memory
    )


@hookimpl
def hermes_pending_writes() -> Iterator[PendingWritesSpec]:
    yield PendingWritesSpec(
        name="memory",
        description="memory writes waiting for approval (memory.write_approval)",
        factory="hermes_plugin_memory_builtin.pending:MemoryWrites",
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="memory",
        description="Built-in memory and the memory provider",
        model="hermes_plugin_memory_builtin.section_model:MemoryConfig",
    )


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    from hermes_plugin_memory_builtin.importing import SOURCE_KINDS, import_memories

    if request.source_kind in SOURCE_KINDS:
        yield import_memories(request)
