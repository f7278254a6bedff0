"""Hermes skills: SKILL.md methods (agentskills.io format) from the user's folders, the
project, plugins and a bundled set; a compact index in each new session's prompt, tools to
load and improve them, a background review that keeps what a turn taught as a skill,
``/skills`` for changes waiting for approval (offered to every front-end too, as the
pending-writes queue ``skills``), and ``hermes skills``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    DashboardPanelSpec,
    PendingWritesSpec,
    PromptContext,
    PromptSection,
    ReviewSpec,
    SessionInfo,
    SlashCommandSpec,
    ToolsetSpec,
    ToolSpec,
    TurnInfo,
    hookimpl,
)
from hermes_sdk.importing import HomeImport, ImportSection


def _lazy(name: str) -> Any:
    """A handler that imports the tools module on first call, not at plugin load."""

    def handler(*args: Any, **kwargs: Any) -> Any:
        from hermes_plugin_skills import tools

        return getattr(tools, name)(*args, **kwargs)

    handler.__name__ = name
    return handler


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="skills", description="load, list and improve SKILL.md skills")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="skills_list",
        toolset="skills",
        takes_context=True,
        parallel_safe=True,
        handler=_lazy("skills_list"),
        description="List installed skills with their descriptions; query filters by words.",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
    )
    yield ToolSpec(
        name="skill_view",
        toolset="skills",
        takes_context=True,
        parallel_safe=True,
        handler=_lazy("skill_view"),
        description=(
            "Load a skill's instructions (SKILL.md) before doing the task it describes; with "
            "file, one of its linked files (references/..., scripts/..., assets/...)."
        ),
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string"}, "file": {"type": "string"}},
            "required": ["name"],
        },
    )
    yield ToolSpec(
        name="skill_manage",
        toolset="skills",
        takes_context=True,
        handler=_lazy("skill_manage"),
        description=(
            "Save and improve skills. create: a new skill from content (a whole SKILL.md: "
            "frontmatter with name and description, then the steps). patch: replace "
            "old_string with new_string in SKILL.md (or in file_path) - the usual way to "
            "improve a skill. edit: replace SKILL.md with content. delete: remove the skill. "
            "write_file / remove_file: a file under scripts/, references/ or assets/."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["create", "patch", "edit", "delete", "write_file", "remove_file"],
                },
                "name": {"type": "string", "description": "the skill (lowercase-with-hyphens)"},
                "content": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
                "file_path": {"type": "string"},
                "file_content": {"type": "string"},
            },
            "required": ["action", "name"],
        },
    )


@hookimpl
def hermes_prompt_sections(context: PromptContext) -> Iterator[PromptSection]:
    from hermes_plugin_skills.tools import prompt_sections

    for title, text in prompt_sections(context):
        yield PromptSection(title=title, text=text, tier=20)


@hookimpl
def hermes_turn_context(session: SessionInfo, text: str) -> str | None:
    """A bundle loaded with /bundles goes with the next message of its chat."""
    from hermes_plugin_skills.bundle_queue import take_for_turn

    return take_for_turn(session.session_id, session.user_scope, session.source)


@hookimpl
def hermes_on_turn_end(turn: TurnInfo) -> None:
    """The skills a turn loaded count as used when it ended well (for the curator)."""
    from hermes_plugin_skills.usage import record_turn

    record_turn(turn.session_id, turn.status == "done")


@hookimpl
def hermes_reviews() -> Iterator[ReviewSpec]:
    from hermes_plugin_skills.review import skill_review

    yield skill_review()


@hookimpl
def hermes_slash_commands() -> Iterator[SlashCommandSpec]:
    yield SlashCommandSpec(
        name="skills",
        description="list skills, or review changes waiting for approval (pending, diff, "
        "approve, reject)",
        handler=_lazy("slash_skills"),
    )
    yield SlashCommandSpec(
        name="bundles",
        description="list skill bundles, or load one with your next message",
        usage="/bundles [NAME [instruction]]",
        handler=_lazy("slash_bundles"),
        on_platforms=True,
    )


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="skills",
        description="skills: list, check, bundles, curator (with the hub: search, install, update)",
        factory="hermes_plugin_skills.cli:skills",
    )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="skills",
        title="Skills",
        description="The skills the agent can load, their use, and changes awaiting approval.",
        factory="hermes_plugin_skills.panel:SkillsPanel",
        order=40,
    )


@hookimpl
def hermes_pending_writes() -> Iterator[PendingWritesSpec]:
    yield PendingWritesSpec(
        name="skills",
        description="skill changes waiting for approval (skills.write_approval)",
        factory="hermes_plugin_skills.pending:SkillWrites",
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="skills", description="Skills", model="hermes_plugin_skills.section_model:SkillsConfig"
    )


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    from hermes_plugin_skills.importing import SOURCE_KINDS, import_skills

    if request.source_kind in SOURCE_KINDS:
        yield import_skills(request)
