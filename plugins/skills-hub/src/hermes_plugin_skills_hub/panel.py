"""The Skill hub page of the dashboard: search the hubs, see what a skill would bring
(scanned, pinned) before installing it, install it, and the hub's skills with their
sources, uninstalled or rolled back."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Coroutine, Mapping
from datetime import datetime
from typing import Any, TypeVar

from hermes_plugin_skills_hub.hub import Hub
from hermes_plugin_skills_hub.packages import HubError
from hermes_plugin_skills_hub.settings import hub_settings
from hermes_sdk.dashboard import (
    Button,
    Code,
    Field,
    Form,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

__all__ = ["HubPanel"]

RESULTS_SHOWN = 50
T = TypeVar("T")


def _digest(summary: str) -> str:
    return hashlib.sha256(summary.encode()).hexdigest()


def _in_thread(work: Coroutine[Any, Any, T]) -> Awaitable[T]:
    """The hub's work on a loop of its own in a worker thread: it stages, scans and writes
    files and waits on its lock, none of which may hold the page's loop."""
    return asyncio.to_thread(asyncio.run, work)


class HubPanel:
    def __init__(self, context: PanelContext) -> None:
        self.home = context.home
        self.runtime = context.runtime

    async def _hub(self) -> Hub:
        """The hub as config.yaml says now (the Settings page may have changed it)."""
        try:
            return Hub(self.home, hub_settings(await self.runtime.read_config()))
        except ValueError as exc:
            raise PanelError(f"config.yaml: {exc}") from None

    async def view(self, query: Mapping[str, str]) -> PanelView:
        text = query.get("q", "").strip()
        sections = [
            Section(
                title="Search",
                blocks=(
                    Form(
                        action="search",
                        submit="Search",
                        fields=(
                            Field(name="q", label="Skills about", value=text, placeholder="pdf"),
                        ),
                    ),
                ),
            )
        ]
        hub = await self._hub()
        if text:
            sections.append(await self._results(hub, text))
        sections.append(await asyncio.to_thread(self._installed, hub))
        return PanelView(sections=tuple(sections))

    async def _results(self, hub: Hub, text: str) -> Section:
        try:
            found, notes = await _in_thread(hub.search(text, limit=RESULTS_SHOWN))
        except (HubError, ValueError) as exc:
            return Section(title="Found", blocks=(Text(text=str(exc), level="error"),))
        rows = tuple(
            Row(
                cells=(
                    item.name,
                    item.source,
                    item.trust,
                    " ".join(item.description.split())[:160],
                ),
                buttons=(
                    Button(
                        action="inspect", label="Install…", values={"identifier": item.identifier}
                    ),
                ),
            )
            for item in found
        )
        return Section(
            title=f"Found for {text!r}",
            blocks=(
                Table(
                    columns=("skill", "source", "trust", "what it does"),
                    rows=rows,
                    empty="nothing found",
                ),
                *(Text(text=note, level="warn") for note in notes),
            ),
        )

    def _installed(self, hub: Hub) -> Section:
        try:
            entries = hub.lock.entries()
        except ValueError as exc:
            return Section(
                title="Installed from the hub", blocks=(Text(text=str(exc), level="error"),)
            )
        rows = []
        for name, entry in sorted(entries.items()):
            when = entry.get("installed_at") or entry.get("updated_at")
            shown = (
                datetime.fromtimestamp(when).strftime("%Y-%m-%d")
                if isinstance(when, int | float)
                else str(when or "-")
            )
            rows.append(
                Row(
                    cells=(
                        name,
                        str(entry.get("source", "")),
                        str(entry.get("identifier", "")),
                        shown,
                    ),
                    buttons=(
                        Button(
                            action="uninstall",
                            label="Uninstall",
                            values={"name": name},
                            confirm=f"Uninstall {name}? (Rollback can put it back.)",
                            danger=True,
                        ),
                    ),
                )
            )
        return Section(
            title="Installed from the hub",
            blocks=(
                Table(
                    columns=("skill", "source", "identifier", "installed"),
                    rows=tuple(rows),
                    empty="nothing is installed from the hub yet",
                ),
            ),
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        try:
            if action == "search":
                return Outcome(message="", query={"q": values.get("q", "").strip()})
            hub = await self._hub()
            if action == "inspect":
                return await self._inspect(hub, values.get("identifier", ""))
            if action == "install":
                return await self._install(hub, values)
            if action == "uninstall":
                line = await asyncio.to_thread(hub.uninstall, values.get("name", ""))
                return Outcome(message=line)
        except (HubError, ValueError) as exc:
            raise PanelError(str(exc)) from None
        raise PanelError(f"no action {action!r} on this page: reload it")

    async def _install(self, hub: Hub, values: Mapping[str, str]) -> Outcome:
        """Installed only if it is still what the page showed (fetched again now)."""
        seen = values.get("seen", "")
        changed: list[str] = []

        def same(summary: str) -> bool:
            if _digest(summary) == seen:
                return True
            changed.append(summary)
            return False

        identifier = values.get("identifier", "")
        outcome = await _in_thread(hub.install(identifier, force=False, confirm=same))
        if changed:
            return Outcome(
                message="it changed since you looked: nothing was installed; check it again",
                ok=False,
            )
        return Outcome(
            message="; ".join(outcome.lines) or "nothing was installed", ok=not outcome.failed
        )

    async def _inspect(self, hub: Hub, identifier: str) -> Outcome:
        """What installing would bring, fetched, scanned and shown; nothing is installed
        until the button under it is pressed (the staged copy is dropped meanwhile)."""
        said: list[str] = []

        def shown(summary: str) -> bool:
            said.append(summary)
            return False

        outcome = await _in_thread(hub.install(identifier, force=False, confirm=shown))
        if not said:  # refused, or installed already: nothing to confirm
            return Outcome(
                message="; ".join(outcome.lines) or "nothing to install", ok=not outcome.failed
            )
        blocks: tuple[Any, ...] = (
            Code(text=said[0]),
            *(
                Text(text=line, level="warn")
                for line in outcome.lines
                if line != "nothing was installed"
            ),
            Form(
                action="install",
                submit="Install",
                fields=(
                    Field(name="identifier", label="", kind="hidden", value=identifier),
                    Field(name="seen", label="", kind="hidden", value=_digest(said[0])),
                ),
            ),
        )
        return Outcome(
            message="check what it brings, then install it",
            view=PanelView(sections=(Section(title=f"Install {identifier}", blocks=blocks),)),
        )
