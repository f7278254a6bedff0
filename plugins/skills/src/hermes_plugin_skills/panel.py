"""The Skills page of the dashboard: every skill the agent can load, where it comes from,
how often it was used, and the skill changes waiting for approval, each with its diff."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from hermes_plugin_skills.library import user_root
from hermes_plugin_skills.plugin_sources import plugin_folders
from hermes_plugin_skills.tools import open_library
from hermes_plugin_skills.usage import Usage
from hermes_sdk.dashboard import (
    Button,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

__all__ = ["SkillsPanel"]

QUEUE = "skills"
DESCRIPTION_SHOWN = 120


def _when(moment: Any) -> str:
    if not isinstance(moment, int | float):
        return "-"
    return datetime.fromtimestamp(moment).strftime("%Y-%m-%d")


class SkillsPanel:
    def __init__(self, context: PanelContext) -> None:
        self.context = context
        self.runtime = context.runtime

    async def view(self, query: Mapping[str, str]) -> PanelView:
        rows, problems = await asyncio.to_thread(self._installed)
        pending = [w for w in await self.runtime.pending_writes() if w.queue == QUEUE]
        waiting = tuple(
            Row(
                cells=(write.title, write.source or "", _when(write.created_at)),
                buttons=(
                    Button(action="approve", label="Approve", values={"id": write.id}),
                    Button(action="reject", label="Reject", values={"id": write.id}, danger=True),
                ),
                detail=write.diff or "(the file changed since: approving will say why)",
            )
            for write in pending
        )
        installed_blocks: tuple[Any, ...] = (
            Table(
                columns=("skill", "source", "uses", "views", "last used", "what it does"),
                rows=rows,
                empty="no skills",
            ),
            *(Text(text=line, level="warn") for line in problems),
        )
        return PanelView(
            sections=(
                Section(
                    title="Waiting for approval",
                    blocks=(
                        Table(
                            columns=("change", "proposed by", "when"),
                            rows=waiting,
                            empty="no skill changes wait (with skills.write_approval on, the "
                            "agent's edits wait here)",
                        ),
                    ),
                ),
                Section(title="Installed", blocks=installed_blocks),
            )
        )

    def _installed(self) -> tuple[tuple[Row, ...], list[str]]:
        context = self.context
        library = open_library(
            context.home,
            "",
            context.config,
            plugin_folders(context.provided, context.home),
        )
        usage = Usage(user_root(context.home)).read()
        rows = []
        for name, skill in sorted(library.skills.items()):
            record = usage.get(name, {})
            description = " ".join(skill.description.split())
            if len(description) > DESCRIPTION_SHOWN:
                description = description[: DESCRIPTION_SHOWN - 1] + "…"
            rows.append(
                Row(
                    cells=(
                        name,
                        skill.source or "",
                        str(record.get("uses", 0)),
                        str(record.get("views", 0)),
                        _when(record.get("last_used_at")),
                        description,
                    )
                )
            )
        problems = [f"{path}: {why}" for path, why in library.errors]
        return tuple(rows), problems

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        if action not in ("approve", "reject"):
            raise PanelError(f"no action {action!r} on this page: reload it")
        try:
            line = await self.runtime.decide_pending_write(
                QUEUE, values.get("id", ""), approve=action == "approve"
            )
        except (LookupError, ValueError, TimeoutError) as exc:
            raise PanelError(str(exc)) from None
        return Outcome(message=line)
