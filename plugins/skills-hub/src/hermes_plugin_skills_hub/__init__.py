"""The skills hub: search and install skills from GitHub repositories and taps, skills.sh,
ClawHub, Claude plugin marketplaces, any site's well-known index, a URL, a folder or a git
repository, and Hermes's optional skills, each quarantined and scanned first, pinned by
content hash with its source in a lock, updated with a diff, audited, and undoable. What it
installs is a skill source (``plugin:hub``) the skills plugin reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    DashboardPanelSpec,
    SkillSourceSpec,
    hookimpl,
)
from hermes_sdk.importing import HomeImport, ImportSection

__version__ = "0.1.0"

COMMANDS = {
    "search": "Search the hubs for skills (cached; offline, the last answers serve).",
    "browse": "Everything the taps, marketplaces, well-known sites and optional skills list.",
    "inspect": "Fetch a skill and show what installing it would bring (nothing is installed).",
    "install": "Install skills from a hub, URL, folder or git repository: scanned, pinned, locked.",
    "update": "Update hub skills: each change is shown as a diff before it is applied.",
    "audit": "Scan every hub skill again and check its files against the lock.",
    "uninstall": "Remove a hub skill (kept aside: rollback brings it back).",
    "rollback": "Put back the version of a hub skill that the last change replaced.",
    "tap": "GitHub folders of skills to search: add, list, remove.",
}


def installed_folder(home: str | Path) -> Path:
    """Where the hub's skills are: asked for every new session, so it imports nothing."""
    return Path(home) / "skills-hub" / "installed"


@hookimpl
def hermes_skill_sources() -> Iterator[SkillSourceSpec]:
    yield SkillSourceSpec(name="hub", factory=installed_folder, per_home=True)


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    for name, description in COMMANDS.items():
        yield CommandSpec(
            name=f"skills.{name}",
            description=description,
            factory=f"hermes_plugin_skills_hub.cli:{name}",
        )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="skill-hub",
        title="Skill hub",
        description="Search the hubs and install skills: fetched, scanned and pinned first.",
        factory="hermes_plugin_skills_hub.panel:HubPanel",
        order=45,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="skills_hub",
        description="Skills hub",
        model="hermes_plugin_skills_hub.section_model:SkillsHubConfig",
    )


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    from hermes_plugin_skills_hub.importing import SOURCE_KINDS, import_hub

    if request.source_kind in SOURCE_KINDS:
        yield import_hub(request)
